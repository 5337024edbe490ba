//! OTLP's protobuf messages, written by hand: the two export requests
//! (`ExportTraceServiceRequest`, `ExportLogsServiceRequest`) and what they
//! hold, with only the fields Warden fills. A call's spans and a line's
//! record are encoded where the call is answered, into one buffer each, and
//! the exporter puts the buffers in a request as they are. The encoding is protobuf's wire
//! format (varints, fixed-width numbers, length-delimited bytes); field
//! numbers are `opentelemetry-proto`'s (v1). The test receiver decodes
//! what this writes with the OpenTelemetry project's own generated classes.

/// An attribute's value (`AnyValue`), borrowed from what it describes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// `string_value`.
    Str(&'a str),
    /// `int_value`.
    Int(i64),
    /// `array_value` of strings.
    Strs(Vec<&'a str>),
}

/// An attribute: a key and its value (`KeyValue`).
pub type Attribute<'a> = (&'static str, Value<'a>);

/// What a span is to its trace (`Span.SpanKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A step inside Warden.
    Internal = 1,
    /// A request Warden answered.
    Server = 2,
}

/// One span (`Span`), encoded at once by [`span`].
#[derive(Clone, Debug)]
pub struct Span<'a> {
    /// 16 bytes, never all zero.
    pub trace_id: [u8; 16],
    /// 8 bytes, never all zero.
    pub span_id: [u8; 8],
    /// The parent span's id; `None` for a trace's root.
    pub parent: Option<[u8; 8]>,
    /// Whether the parent is another process's (the harness's).
    pub remote_parent: bool,
    /// The harness's `tracestate`, passed on.
    pub trace_state: &'a str,
    /// The span's name.
    pub name: &'a str,
    /// Its kind.
    pub kind: Kind,
    /// When it started and ended, in nanoseconds since the epoch.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Its attributes.
    pub attributes: Vec<Attribute<'a>>,
    /// A failure's stable code, for the status `ERROR`; `None` leaves the
    /// status unset (a deny is not an error).
    pub error: Option<&'a str>,
}

/// Appends `span` to `out` as an entry of `ScopeSpans.spans`: a call's
/// spans are encoded where the call is answered, and sent as they are.
pub fn span(out: &mut Vec<u8>, span: &Span<'_>) {
    Message::on(out, |out| {
        out.nested(2, |m| {
            m.bytes(1, &span.trace_id);
            m.bytes(2, &span.span_id);
            m.string(3, span.trace_state);
            if let Some(parent) = &span.parent {
                m.bytes(4, parent);
            }
            m.string(5, span.name);
            m.uint(6, span.kind as u64);
            m.fixed64(7, span.start_ns);
            m.fixed64(8, span.end_ns);
            for attribute in &span.attributes {
                m.nested(9, |m| key_value(m, attribute));
            }
            if let Some(code) = span.error {
                m.nested(15, |status| {
                    status.string(2, code);
                    // STATUS_CODE_ERROR
                    status.uint(3, 2);
                });
            }
            // The trace's flags (sampled), and whether the parent is remote
            // (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, ..._IS_REMOTE_MASK).
            let remote = if span.remote_parent { 0x300 } else { 0x100 };
            m.fixed32(16, 0x01 | remote);
        });
    });
}

/// Appends a decision log line to `out` as an entry of
/// `ScopeLogs.log_records`, written at `time_ns`.
pub fn log_record(out: &mut Vec<u8>, time_ns: u64, line: &str) {
    Message::on(out, |out| {
        out.nested(2, |record| {
            record.fixed64(1, time_ns);
            // SEVERITY_NUMBER_INFO
            record.uint(2, 9);
            record.string(3, "INFO");
            record.nested(5, |body| body.string_always(1, line));
            record.fixed64(11, time_ns);
            record.string(12, "warden.decision");
        });
    });
}

/// `Resource` with `attributes`, encoded once.
pub fn resource(attributes: &[Attribute<'_>]) -> Vec<u8> {
    let mut resource = Message::default();
    for attribute in attributes {
        resource.nested(1, |m| key_value(m, attribute));
    }
    resource.0
}

/// `ExportTraceServiceRequest` for spans encoded by [`span`], from one
/// resource (encoded by [`resource`]).
pub fn traces(resource: &[u8], spans: &[&[u8]]) -> Vec<u8> {
    export(resource, spans)
}

/// `ExportLogsServiceRequest` for records encoded by [`log_record`], from
/// one resource.
pub fn logs(resource: &[u8], records: &[&[u8]]) -> Vec<u8> {
    export(resource, records)
}

/// Both requests have the same shape: `{1: {1: resource, 2: {1: scope,
/// 2: entry...}}}` (`resource_spans` / `resource_logs`, `scope_spans` /
/// `scope_logs`, `spans` / `log_records`).
fn export(resource: &[u8], entries: &[&[u8]]) -> Vec<u8> {
    let size = entries.iter().map(|e| e.len()).sum::<usize>() + resource.len() + 64;
    let mut request = Message(Vec::with_capacity(size));
    request.nested(1, |resourced| {
        resourced.bytes(1, resource);
        resourced.nested(2, |scoped| {
            // The instrumentation scope: Warden and its version.
            scoped.nested(1, |scope| {
                scope.string(1, "warden");
                scope.string(2, env!("CARGO_PKG_VERSION"));
            });
            for entry in entries {
                scoped.0.extend_from_slice(entry);
            }
        });
    });
    request.0
}

fn key_value(out: &mut Message, (key, value): &Attribute<'_>) {
    out.string(1, key);
    out.nested(2, |any| match value {
        Value::Str(text) => any.string_always(1, text),
        Value::Int(number) => {
            any.key(3, VARINT);
            any.varint(*number as u64);
        }
        Value::Strs(texts) => any.nested(5, |array| {
            for text in texts {
                array.nested(1, |any| any.string_always(1, text));
            }
        }),
    });
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// A message being written, field by field.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.0.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LENGTH);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// A string field, left out when empty (proto3's default).
    fn string(&mut self, field: u32, text: &str) {
        if !text.is_empty() {
            self.bytes(field, text.as_bytes());
        }
    }

    /// A string in a `oneof`, written even when empty: its presence says
    /// which member is set.
    fn string_always(&mut self, field: u32, text: &str) {
        self.bytes(field, text.as_bytes());
    }

    /// Writes with `write` onto the end of `out`.
    fn on(out: &mut Vec<u8>, write: impl FnOnce(&mut Message)) {
        let mut message = Message(std::mem::take(out));
        write(&mut message);
        *out = message.0;
    }

    /// A message field written in place by `write`: its length is put in
    /// front once known (a byte is kept for it, and moved over for a longer
    /// one), so that nothing is encoded twice or copied from a buffer of its
    /// own.
    fn nested(&mut self, field: u32, write: impl FnOnce(&mut Message)) {
        self.key(field, LENGTH);
        let at = self.0.len();
        self.0.push(0);
        write(self);
        let len = self.0.len() - at - 1;
        if len < 0x80 {
            self.0[at] = len as u8;
        } else {
            let mut prefix = Message(Vec::with_capacity(10));
            prefix.varint(len as u64);
            self.0.splice(at..=at, prefix.0);
        }
    }

    /// A varint field, left out when zero.
    fn uint(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.key(field, VARINT);
            self.varint(value);
        }
    }

    fn fixed64(&mut self, field: u32, value: u64) {
        self.key(field, FIXED64);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn fixed32(&mut self, field: u32, value: u32) {
        self.key(field, FIXED32);
        self.0.extend_from_slice(&value.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_written_seven_bits_at_a_time() {
        let mut m = Message::default();
        m.varint(1);
        m.varint(300);
        m.varint(u64::MAX);
        assert_eq!(m.0[..3], [0x01, 0xac, 0x02]);
        assert_eq!(m.0.len(), 3 + 10);
    }

    #[test]
    fn a_negative_int_is_ten_bytes_as_protobuf_writes_int64() {
        let mut m = Message::default();
        key_value(&mut m, &("k", Value::Int(-1)));
        // key: tag, length, "k"; value: tag, length, then tag and 10 bytes.
        assert_eq!(m.0.len(), 3 + 2 + 1 + 10);
    }

    #[test]
    fn a_nested_message_of_any_length_gets_its_length_in_front() {
        for len in [0, 1, 127, 128, 300, 20_000] {
            let mut m = Message::default();
            m.nested(1, |inner| inner.0.extend(std::iter::repeat_n(7u8, len)));
            let mut expected = Message::default();
            expected.bytes(1, &vec![7u8; len]);
            assert_eq!(m.0, expected.0, "{len}");
        }
    }
}
