//! One query request: SQL, attached databases, settings, parameters,
//! transfer mode and row limit.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::proto::query_param::{self, Parameters};
use super::proto::{
    AttachedDatabase, OutputFormat, QueryParam, QueryParameterArrow, QueryParameterJson,
};

/// How hyperd delivers a result (see the [module docs](super)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransferMode {
    /// The whole result on the `ExecuteQuery` stream; nothing is kept on
    /// the server. The default: it works whatever the server's settings,
    /// and it was the fastest mode in every measurement (a 10M-row
    /// `query_arrow` on a server without persisted results: 0.18 s, against
    /// 0.37 s with them; docs in DEVELOPMENT.md, "Where gRPC reads spend
    /// their time").
    #[default]
    Sync,
    /// `ExecuteQuery` returns at once with the query id; the result is
    /// persisted by the server and fetched chunk by chunk
    /// (`GetQueryInfo` + `GetQueryResult`). Needs hyperd's
    /// `--grpc-persist-results=true`.
    Async,
    /// The first chunk on the `ExecuteQuery` stream, the rest as in
    /// [`TransferMode::Async`]: small results in one round trip, large ones
    /// without a long-lived stream. Needs `--grpc-persist-results=true`
    /// once a result is larger than its first chunk.
    Adaptive,
}

impl TransferMode {
    /// Whether the server must persist results for this mode
    /// (`--grpc-persist-results=true`): ASYNC fetches every result from that
    /// storage, ADAPTIVE whatever follows its first chunk. SYNC never does.
    pub fn needs_persisted_results(self) -> bool {
        self != TransferMode::Sync
    }

    fn to_proto(self) -> query_param::TransferMode {
        match self {
            TransferMode::Sync => query_param::TransferMode::Sync,
            TransferMode::Async => query_param::TransferMode::Async,
            TransferMode::Adaptive => query_param::TransferMode::Adaptive,
        }
    }
}

/// Bound parameters for `$1`, `$2`, ... in the query text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrpcParameters {
    /// An Arrow IPC stream with one row; column `i` is parameter `$(i+1)`,
    /// names are ignored and the Arrow types become the parameter types
    /// (measured on hyperd 0.0.26963).
    ArrowIpc(Bytes),
    /// hyperd's JSON form: an array of objects with `type` and `value`
    /// entries (hyperd rejects plain JSON arrays).
    Json(String),
}

/// A database to attach for one query: the `.hyper` file and its alias.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GrpcDatabase {
    pub path: String,
    pub alias: String,
}

/// A query as `ExecuteQuery` takes it. gRPC calls are stateless: the
/// databases and settings travel with every query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrpcQuery {
    pub sql: String,
    pub databases: Vec<GrpcDatabase>,
    /// Query settings (`name` -> value); hyperd rejects unknown names.
    pub settings: BTreeMap<String, String>,
    pub transfer_mode: TransferMode,
    pub parameters: Option<GrpcParameters>,
    /// At most this many rows are produced (`query_row_limit`).
    pub row_limit: Option<u64>,
}

impl GrpcQuery {
    /// A query with default options (SYNC, no databases).
    pub fn new(sql: impl Into<String>) -> GrpcQuery {
        GrpcQuery {
            sql: sql.into(),
            ..GrpcQuery::default()
        }
    }

    pub(crate) fn to_param(&self) -> QueryParam {
        let parameters = self.parameters.as_ref().map(|p| match p {
            GrpcParameters::ArrowIpc(data) => {
                Parameters::ArrowParameters(QueryParameterArrow { data: data.clone() })
            }
            GrpcParameters::Json(data) => {
                Parameters::JsonParameters(QueryParameterJson { data: data.clone() })
            }
        });
        let param_style = if parameters.is_some() {
            query_param::ParameterStyle::DollarNumbered
        } else {
            query_param::ParameterStyle::Unspecified
        };
        QueryParam {
            query: self.sql.clone(),
            databases: self
                .databases
                .iter()
                .map(|d| AttachedDatabase {
                    path: d.path.clone(),
                    alias: d.alias.clone(),
                })
                .collect(),
            output_format: OutputFormat::ArrowIpc.into(),
            settings: self.settings.clone().into_iter().collect(),
            transfer_mode: self.transfer_mode.to_proto().into(),
            param_style: param_style.into(),
            parameters,
            result_range: None,
            query_row_limit: self.row_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_switch_to_dollar_numbered() {
        let mut q = GrpcQuery::new("SELECT $1");
        assert_eq!(
            q.to_param().param_style,
            i32::from(query_param::ParameterStyle::Unspecified)
        );
        q.parameters = Some(GrpcParameters::ArrowIpc(Bytes::from_static(b"x")));
        let p = q.to_param();
        assert_eq!(
            p.param_style,
            i32::from(query_param::ParameterStyle::DollarNumbered)
        );
        assert_eq!(p.output_format, i32::from(OutputFormat::ArrowIpc));
        assert_eq!(p.transfer_mode, i32::from(query_param::TransferMode::Sync));
    }

    #[test]
    fn only_sync_does_without_persisted_results() {
        assert!(!TransferMode::Sync.needs_persisted_results());
        assert!(TransferMode::Async.needs_persisted_results());
        assert!(TransferMode::Adaptive.needs_persisted_results());
    }
}
