//! What the tracing tests capture: a [`Capture`] layer keeps every span's
//! fields and every event of the code a test runs under it (its own
//! subscriber, so tests running in parallel never see each other's spans).
//! Used by `tracing.rs`, `route_tracing.rs`, `abandoned.rs` and `route.rs`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// One span as the subscriber saw it: its fields as first given and as
/// recorded later, and whether it was closed.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpanRec {
    name: &'static str,
    fields: BTreeMap<String, String>,
    pub(crate) closed: bool,
}

impl SpanRec {
    pub(crate) fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }

    pub(crate) fn field(&self, field: &str) -> &str {
        self.get(field)
            .unwrap_or_else(|| panic!("no field {field} in {self:?}"))
    }

    pub(crate) fn num(&self, field: &str) -> f64 {
        self.field(field)
            .parse()
            .unwrap_or_else(|e| panic!("{field} of {self:?}: {e}"))
    }
}

#[derive(Clone, Debug)]
pub(crate) struct EventRec {
    pub(crate) level: Level,
    pub(crate) target: String,
    pub(crate) fields: BTreeMap<String, String>,
    /// The name of the span the event belongs to.
    pub(crate) parent: Option<&'static str>,
}

#[derive(Debug, Default)]
struct Captured {
    spans: Vec<SpanRec>,
    /// Span id -> index in `spans` (the registry reuses ids of closed spans).
    ids: BTreeMap<u64, usize>,
    events: Vec<EventRec>,
}

/// The collecting layer; clones share what was captured.
#[derive(Clone, Debug, Default)]
pub(crate) struct Capture(Arc<Mutex<Captured>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut span = SpanRec {
            name: attrs.metadata().name(),
            ..SpanRec::default()
        };
        attrs.record(&mut Fields(&mut span.fields));
        let mut c = self.0.lock().unwrap();
        let index = c.spans.len();
        c.spans.push(span);
        c.ids.insert(id.into_u64(), index);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut c = self.0.lock().unwrap();
        let index = c.ids[&id.into_u64()];
        values.record(&mut Fields(&mut c.spans[index].fields));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let parent = ctx.event_span(event).map(|s| s.name());
        self.0.lock().unwrap().events.push(EventRec {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
            parent,
        });
    }

    fn on_close(&self, id: Id, _: Context<'_, S>) {
        let mut c = self.0.lock().unwrap();
        let index = c.ids[&id.into_u64()];
        c.spans[index].closed = true;
    }
}

/// A subscriber that is nobody's default and only keeps callsites asked
/// (`Interest::sometimes`). tracing caches each callsite's interest
/// process-wide, computed once when the callsite is first hit; with a
/// single dispatcher registered it is computed from the hitting thread's
/// default. A parallel test's thread without a subscriber then cached
/// `never` for a statement span, and a capture installed on another
/// thread saw nothing (seen: `abandoned`'s async test, run beside
/// `async_drop`). With this one registered too, the interest is the union
/// over every live dispatcher, and each call asks its own thread's.
struct Anchor;

impl Subscriber for Anchor {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Registers [`Anchor`] once, before any capture's own dispatcher.
fn anchor() {
    static ANCHOR: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| tracing::Dispatch::new(Anchor));
}

impl Capture {
    /// Runs `f` with this layer (under `filter`) as the thread's subscriber.
    pub(crate) fn run_filtered<T>(&self, filter: LevelFilter, f: impl FnOnce() -> T) -> T {
        anchor();
        let subscriber = tracing_subscriber::registry().with(self.clone().with_filter(filter));
        tracing::subscriber::with_default(subscriber, f)
    }

    pub(crate) fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        self.run_filtered(LevelFilter::TRACE, f)
    }

    /// Makes this layer the thread's subscriber until the guard drops
    /// (async tests on a current-thread runtime).
    pub(crate) fn install(&self) -> tracing::subscriber::DefaultGuard {
        anchor();
        tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()))
    }

    /// Every statement span captured, in order.
    pub(crate) fn statements(&self) -> Vec<SpanRec> {
        self.spans("hyperdb.statement")
    }

    pub(crate) fn spans(&self, name: &str) -> Vec<SpanRec> {
        let c = self.0.lock().unwrap();
        c.spans.iter().filter(|s| s.name == name).cloned().collect()
    }

    /// The statement spans whose SQL is `sql`, in order.
    pub(crate) fn statements_for(&self, sql: &str) -> Vec<SpanRec> {
        self.statements()
            .into_iter()
            .filter(|s| s.get("db.statement") == Some(sql))
            .collect()
    }

    /// The one statement span whose SQL is `sql`.
    pub(crate) fn statement(&self, sql: &str) -> SpanRec {
        let found = self.statements_for(sql);
        assert_eq!(found.len(), 1, "spans for {sql}: {:?}", self.statements());
        found.into_iter().next().unwrap()
    }

    pub(crate) fn events(&self) -> Vec<EventRec> {
        self.0.lock().unwrap().events.clone()
    }

    /// Every string the subscriber was given: span names and fields,
    /// event targets and fields (the message is a field).
    pub(crate) fn everything(&self) -> String {
        let c = self.0.lock().unwrap();
        let mut all = String::new();
        for s in &c.spans {
            all.push_str(s.name);
            for (k, v) in &s.fields {
                all.push_str(&format!("\n{k}={v}"));
            }
        }
        for e in &c.events {
            all.push_str(&format!("\n{}", e.target));
            for (k, v) in &e.fields {
                all.push_str(&format!("\n{k}={v}"));
            }
        }
        all
    }
}
