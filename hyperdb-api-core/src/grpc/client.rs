//! The gRPC client: one HTTP/2 channel, requests with their metadata, and
//! cancellation.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::Request;

use super::config::GrpcConfig;
use super::deadline::{until, QueryDeadline};
use super::error::{status_to_error, transport_error};
use super::proto::hyper_service_client::HyperServiceClient;
use super::proto::{CancelQueryParam, QueryParam};
use super::query::GrpcQuery;
use super::result::GrpcResult;
use crate::error::{Error, Result};

/// The header naming the query on `GetQueryInfo`, `GetQueryResult` and
/// `CancelQuery`; hyperd refuses those calls without it (measured:
/// "header x-hyperdb-query-id is missing").
pub const QUERY_ID_HEADER: &str = "x-hyperdb-query-id";

/// An async client for hyperd's `HyperService`.
///
/// Cheap to clone (clones share the HTTP/2 connection); queries may run
/// concurrently. Each [`GrpcClient::execute`] returns a [`GrpcResult`]
/// yielding the result as Arrow IPC stream bytes.
#[derive(Clone)]
pub struct GrpcClient {
    pub(crate) rpc: HyperServiceClient<Channel>,
    headers: Arc<MetadataMap>,
    pub(crate) current: Arc<Mutex<Current>>,
    uri: Arc<str>,
    /// [`GrpcConfig::with_query_timeout`].
    pub(crate) query_timeout: Option<Duration>,
}

impl std::fmt::Debug for GrpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcClient")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// The query a [`GrpcCancelHandle`] cancels: the one most recently started
/// through this client (or its clones) that has not ended.
#[derive(Debug, Default)]
pub(crate) struct Current {
    /// Bumped by every `execute`; a result only touches `Current` while the
    /// generation is still its own.
    pub(crate) generation: u64,
    /// A query is between `execute` and its end.
    pub(crate) running: bool,
    pub(crate) query_id: Option<String>,
    /// `cancel` came before the query id was known.
    pub(crate) cancel_requested: bool,
}

pub(crate) fn lock(current: &Mutex<Current>) -> std::sync::MutexGuard<'_, Current> {
    current.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GrpcClient {
    /// Connects (TCP, TLS for `https`, HTTP/2) and fails if the server
    /// cannot be reached or its certificate is not trusted.
    pub async fn connect(config: &GrpcConfig) -> Result<GrpcClient> {
        let context = || format!("connecting to {}", config.uri);
        config.check_http2()?;
        let mut endpoint = Endpoint::from_shared(config.uri.clone())
            .map_err(|e| transport_error(&context(), e))?
            .tcp_nodelay(true)
            .initial_stream_window_size(config.stream_window)
            .initial_connection_window_size(config.connection_window)
            .http2_adaptive_window(config.adaptive_window)
            .max_frame_size(config.max_frame_size);
        if let Some(timeout) = config.connect_timeout {
            endpoint = endpoint.connect_timeout(timeout);
        }
        if config.tls {
            let mut tls = ClientTlsConfig::new();
            if config.system_roots {
                tls = tls.with_native_roots();
            }
            for pem in &config.ca_certificates {
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            if let Some(domain) = &config.domain {
                tls = tls.domain_name(domain.clone());
            }
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| transport_error(&context(), e))?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| transport_error(&context(), e))?;
        let mut headers = MetadataMap::new();
        for (name, value) in &config.headers {
            let key = AsciiMetadataKey::from_bytes(name.as_bytes())
                .map_err(|_| Error::config(format!("bad gRPC header name `{name}`")))?;
            let value = AsciiMetadataValue::try_from(value.as_str())
                .map_err(|_| Error::config(format!("bad value for gRPC header `{name}`")))?;
            headers.insert(key, value);
        }
        let rpc = HyperServiceClient::new(channel)
            .max_decoding_message_size(config.max_message_size)
            .max_encoding_message_size(config.max_message_size);
        Ok(GrpcClient {
            rpc,
            headers: Arc::new(headers),
            current: Arc::default(),
            uri: config.uri.as_str().into(),
            query_timeout: config.query_timeout,
        })
    }

    /// The server URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Starts `query` and returns once hyperd has accepted it (its query id
    /// is known); the result is then read from the [`GrpcResult`].
    pub async fn execute(&self, query: &GrpcQuery) -> Result<GrpcResult> {
        let generation = {
            let mut current = lock(&self.current);
            current.generation += 1;
            current.running = true;
            current.query_id = None;
            current.cancel_requested = false;
            current.generation
        };
        let deadline = self.query_timeout.map(QueryDeadline::new);
        let param: QueryParam = query.to_param();
        let request = match self.request(param, None) {
            Ok(request) => request,
            Err(e) => {
                self.end(generation);
                return Err(e);
            }
        };
        let mut rpc = self.rpc.clone();
        let started = until(deadline.as_ref(), rpc.execute_query(request)).await;
        let stream = match started {
            Ok(Ok(response)) => response.into_inner(),
            Ok(Err(status)) => {
                self.end(generation);
                return Err(status_to_error(status));
            }
            // Expired before hyperd named the query: nothing to cancel.
            Err(e) => {
                self.end(generation);
                return Err(e);
            }
        };
        let mut result = GrpcResult::new(
            self.clone(),
            generation,
            query.transfer_mode,
            stream,
            deadline,
        );
        result.start().await?;
        Ok(result)
    }

    /// Cancels the query `query_id` (of any client). hyperd answers at
    /// once; the query's own stream then ends with a cancelled error
    /// (SQLSTATE 57014).
    pub async fn cancel(&self, query_id: &str) -> Result<()> {
        let request = self.request(
            CancelQueryParam {
                query_id: query_id.to_owned(),
            },
            Some(query_id),
        )?;
        self.rpc
            .clone()
            .cancel_query(request)
            .await
            .map(drop)
            .map_err(status_to_error)
    }

    /// A handle that cancels the query currently running on this client
    /// from anywhere (another task or, through a runtime, another thread).
    pub fn cancel_handle(&self) -> GrpcCancelHandle {
        GrpcCancelHandle {
            client: self.clone(),
            target: Target::Current,
        }
    }

    /// A request carrying the configured headers and, for calls about one
    /// query, [`QUERY_ID_HEADER`].
    pub(crate) fn request<T>(&self, message: T, query_id: Option<&str>) -> Result<Request<T>> {
        let mut request = Request::new(message);
        let metadata = request.metadata_mut();
        for entry in self.headers.iter() {
            if let tonic::metadata::KeyAndValueRef::Ascii(k, v) = entry {
                metadata.insert(k.clone(), v.clone());
            }
        }
        if let Some(id) = query_id {
            let value = AsciiMetadataValue::try_from(id).map_err(|_| {
                Error::protocol(format!("hyperd sent a query id that is not ASCII: {id:?}"))
            })?;
            metadata.insert(QUERY_ID_HEADER, value);
        }
        Ok(request)
    }

    /// The result of `generation` has ended; the cancel handle forgets it.
    pub(crate) fn end(&self, generation: u64) {
        let mut current = lock(&self.current);
        if current.generation == generation {
            current.running = false;
            current.query_id = None;
            current.cancel_requested = false;
        }
    }
}

/// Cancels the query running on a [`GrpcClient`] (from
/// [`GrpcClient::cancel_handle`]), or one result's query (from
/// [`GrpcResult::cancel_handle`](super::GrpcResult::cancel_handle)).
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct GrpcCancelHandle {
    client: GrpcClient,
    target: Target,
}

/// Which query a [`GrpcCancelHandle`] cancels.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// The one most recently started on the client, when the cancel comes.
    Current,
    /// This one (none: a result whose id never came, so nothing to cancel).
    Query(Option<String>),
}

impl GrpcCancelHandle {
    pub(crate) fn for_query(client: GrpcClient, query_id: Option<String>) -> GrpcCancelHandle {
        GrpcCancelHandle {
            client,
            target: Target::Query(query_id),
        }
    }

    /// Cancels the handle's query: a result's own, or the client's running
    /// one. With none running this does nothing; a query still starting
    /// (its id not yet known) is cancelled as soon as its id arrives.
    pub async fn cancel(&self) -> Result<()> {
        if let Target::Query(id) = &self.target {
            return match id {
                Some(id) => self.client.cancel(id).await,
                None => Ok(()),
            };
        }
        let id = {
            let mut current = lock(&self.client.current);
            match (&current.query_id, current.running) {
                (Some(id), _) => id.clone(),
                (None, true) => {
                    current.cancel_requested = true;
                    return Ok(());
                }
                (None, false) => return Ok(()),
            }
        };
        self.client.cancel(&id).await
    }
}
