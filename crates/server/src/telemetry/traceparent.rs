//! The W3C Trace Context header a harness sends (`traceparent:
//! 00-<trace id>-<parent span id>-<flags>`), read strictly: a header that is
//! not exactly that is ignored, and the call starts a trace of its own.
//! Std only: the `traceparent` fuzz target compiles this file alone.

/// A harness's trace, as its `traceparent` header names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace the call belongs to (never all zero).
    pub trace_id: [u8; 16],
    /// The harness's span the call's span is a child of (never all zero).
    pub span_id: [u8; 8],
    /// Whether the harness sampled its trace (flag `01`).
    pub sampled: bool,
}

impl TraceParent {
    /// Reads a `traceparent` value: version `00` exactly as specified, or a
    /// later version's first four fields (the specification's rule for a
    /// version it does not know). `None` for anything else.
    pub fn parse(header: &str) -> Option<TraceParent> {
        let header = header.trim_matches([' ', '\t']);
        if !header.is_ascii() {
            return None;
        }
        let bytes = header.as_bytes();
        if bytes.len() < 55 || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let version = hex::<1>(&header[0..2])?[0];
        // Version ff is invalid; 00 has exactly four fields; a later
        // version may add fields after a dash.
        if version == 0xff
            || (version == 0 && bytes.len() != 55)
            || (version != 0 && bytes.len() > 55 && bytes[55] != b'-')
        {
            return None;
        }
        let trace_id = hex::<16>(&header[3..35])?;
        let span_id = hex::<8>(&header[36..52])?;
        let flags = hex::<1>(&header[53..55])?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The header's value for a child span `span_id` of this trace.
    pub fn header(trace_id: &[u8; 16], span_id: &[u8; 8], sampled: bool) -> String {
        format!(
            "00-{}-{}-{:02x}",
            to_hex(trace_id),
            to_hex(span_id),
            u8::from(sampled)
        )
    }
}

/// `N` bytes from `2N` lowercase hex digits (the specification allows no
/// upper case).
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let nibble = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0; N];
    for (i, pair) in digits.chunks(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_version_00_header_is_read_and_written_back() {
        let parent = TraceParent::parse(HEADER).unwrap();
        assert!(parent.sampled);
        assert_eq!(
            parent.span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert_eq!(
            TraceParent::header(&parent.trace_id, &parent.span_id, true),
            HEADER
        );
    }

    #[test]
    fn a_later_version_is_read_by_its_first_four_fields() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes";
        assert!(!TraceParent::parse(later).unwrap().sampled);
    }

    #[test]
    fn anything_else_is_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "0é-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }
}
