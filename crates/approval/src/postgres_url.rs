//! Reading a PostgreSQL connection string for what its client does not read:
//! libpq's `sslmode` (whose `verify-ca` and `verify-full` the client does not
//! know) and `sslrootcert` ([`crate::postgres_tls`] uses them). Std only, so
//! that the fuzz target builds it from this file.

use std::path::PathBuf;

/// A connection string without `sslmode` and `sslrootcert`, and their
/// values.
pub struct Split {
    /// The string without them, for PostgreSQL's client.
    pub rest: String,
    /// `sslmode`, as written.
    pub mode: Option<String>,
    /// `sslrootcert`, decoded.
    pub root_cert: Option<PathBuf>,
}

/// Takes `sslmode` and `sslrootcert` out of `url` (a `postgres://` URL or a
/// `key=value` string). Errors name the fault, never the string (it may hold
/// a password).
pub fn split(url: &str) -> Result<Split, String> {
    let mut mode = None;
    let mut root_cert = None;
    let mut take = |key: &str, value: String| match key {
        "sslmode" => {
            mode = Some(value);
            true
        }
        "sslrootcert" => {
            root_cert = Some(PathBuf::from(value));
            true
        }
        _ => false,
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(key, percent_decoded(value)?) {
                kept.push(pair);
            }
        }
        if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        }
    } else {
        let mut kept = Vec::new();
        for (key, value) in key_values(url)? {
            if !take(&key, value.clone()) {
                kept.push(format!(
                    "{key}='{}'",
                    value.replace('\\', "\\\\").replace('\'', "\\'")
                ));
            }
        }
        kept.join(" ")
    };
    Ok(Split {
        rest,
        mode,
        root_cert,
    })
}

/// A URL query value, `%XX` decoded.
fn percent_decoded(value: &str) -> Result<String, String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % in the URL's query is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the URL's query decodes to text that is not UTF-8".into())
}

/// The pairs of a `key=value` connection string, as libpq reads them: values
/// bare or in single quotes, where `\'` and `\\` stand for `'` and `\`.
fn key_values(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        // libpq's keys are words; anything else (a URL written after a
        // space, say) is no connection string.
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "'{key}' is not a key of a connection string (a URL starts with postgres://)"
            ));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("the connection string's '{key}' has no '='"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => {
                        value.push(chars.next().ok_or("a connection string ends in '\\'")?)
                    }
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        return Err(format!(
                            "the connection string's '{key}' has no closing quote"
                        ));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(c);
            }
        }
        pairs.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_a_url() {
        let s = split("postgres://u:p@db:5432/w?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x").unwrap();
        assert_eq!(s.rest, "postgres://u:p@db:5432/w?application_name=x");
        assert_eq!(s.mode.as_deref(), Some("verify-full"));
        assert_eq!(s.root_cert, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(
            split("postgres://db/w?sslmode=require").unwrap().rest,
            "postgres://db/w"
        );
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_a_key_value_string() {
        let s = split("host=db sslmode=verify-ca sslrootcert='/a b/ca.pem' dbname=w").unwrap();
        assert_eq!(s.rest, "host='db' dbname='w'");
        assert_eq!(s.mode.as_deref(), Some("verify-ca"));
        assert_eq!(s.root_cert, Some(PathBuf::from("/a b/ca.pem")));
    }

    #[test]
    fn broken_strings_are_refused() {
        assert!(split("host=db password='open").is_err());
        assert!(split("host").is_err());
        assert!(split("postgres://db/w?sslrootcert=%zz").is_err());
        assert!(split("host=db password='ends in \\").is_err());
        assert!(split("\tpostgres://db/w?sslmode=disable").is_err());
        assert!(split("=v").is_err());
    }
}
