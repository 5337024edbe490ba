//! Python values into JSON values, for the one path where speed matters: a
//! call's arguments and context on `evaluate`, converted directly instead of
//! through `json.dumps` and a parse. It accepts exactly what the HTTP client
//! would send (`warden.encoding`): what JSON cannot carry (`NaN`, a lone
//! surrogate, a non-string key, a set, ...) is refused with the path of the
//! value, as the client refuses it, and nesting is bounded so that a hostile
//! depth cannot overflow the stack.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Why a value could not be converted.
pub enum Problem {
    /// JSON cannot carry the value at `path` (`tool_input.timeout`).
    Unencodable { path: String, why: String },
    /// Nested deeper than the limit.
    TooDeep,
}

/// A path under construction, built only on the error path: each level that
/// returns an error puts its own segment in front.
fn within(problem: Problem, segment: Segment<'_>) -> Problem {
    match problem {
        Problem::Unencodable { path, why } => {
            let path = match (segment, path.is_empty()) {
                (Segment::Key(key), true) => key.to_string(),
                (Segment::Key(key), false) if path.starts_with('[') => format!("{key}{path}"),
                (Segment::Key(key), false) => format!("{key}.{path}"),
                (Segment::Index(i), _) => format!("[{i}]{path}"),
            };
            Problem::Unencodable { path, why }
        }
        Problem::TooDeep => Problem::TooDeep,
    }
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Converts `value`; `depth` is its nesting level (an object or array at the
/// top is level 1), refused past `max_depth`. `size` adds up about how many
/// bytes the JSON text would take, for the caller's size limit.
pub fn to_value(
    value: &Bound<'_, PyAny>,
    depth: usize,
    max_depth: usize,
    size: &mut usize,
) -> Result<Value, Problem> {
    // The common types first; `bool` before `int`, which it subclasses.
    if let Ok(text) = value.cast::<PyString>() {
        // `to_cow`: the stable ABI of Python 3.9 has no borrowed UTF-8 view.
        let text = text.to_cow().map_err(|_| lone_surrogate())?.into_owned();
        *size += text.len() + 2;
        return Ok(Value::String(text));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return object(dict, depth, max_depth, size, false);
    }
    *size += 8;
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = value.extract::<u64>() {
            return Ok(Value::from(n));
        }
        // Larger than 64 bits: the daemon's parser reads such a number as a
        // float, so the in-process core does too.
        let n: f64 = value
            .extract()
            .map_err(|_| unencodable("the integer is too large for a JSON number"))?;
        return Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| unencodable("the integer is too large for a JSON number"));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        let n = float.value();
        return Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| unencodable(&format!("{} is not a JSON number", float_repr(n))));
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        let name = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "value".into());
        return Err(unencodable(&format!("a {name} is not a JSON value")));
    };
    if depth + 1 > max_depth {
        return Err(Problem::TooDeep);
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(
            to_value(item, depth + 1, max_depth, size).map_err(|p| within(p, Segment::Index(i)))?,
        );
    }
    Ok(Value::Array(out))
}

/// A dict as a JSON object. With `skip_none`, keys whose value is `None` are
/// left out (what the client does with a call's context).
pub fn object(
    dict: &Bound<'_, PyDict>,
    depth: usize,
    max_depth: usize,
    size: &mut usize,
    skip_none: bool,
) -> Result<Value, Problem> {
    if depth + 1 > max_depth {
        return Err(Problem::TooDeep);
    }
    let mut map = Map::new();
    for (key, item) in dict.iter() {
        let Ok(key) = key.cast::<PyString>() else {
            let shown = key
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(Problem::Unencodable {
                path: shown,
                why: "an object key must be a string".into(),
            });
        };
        let Ok(key) = key.to_cow() else {
            // Python's `repr` escapes the surrogate, as the client names it.
            return Err(Problem::Unencodable {
                path: key
                    .repr()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|_| "?".into()),
                why: "the text holds a lone surrogate, which is not Unicode".into(),
            });
        };
        if skip_none && item.is_none() {
            continue;
        }
        *size += key.len() + 4;
        let value = to_value(&item, depth + 1, max_depth, size)
            .map_err(|p| within(p, Segment::Key(&key)))?;
        map.insert(key.into_owned(), value);
    }
    Ok(Value::Object(map))
}

/// `path` prefixed with `prefix` (`tool_input`), as the client names it.
pub fn under(problem: Problem, prefix: &str) -> Problem {
    within(problem, Segment::Key(prefix))
}

fn unencodable(why: &str) -> Problem {
    Problem::Unencodable {
        path: String::new(),
        why: why.to_string(),
    }
}

fn lone_surrogate() -> Problem {
    unencodable("the text holds a lone surrogate, which is not Unicode")
}

/// Python's `repr` of a float that is not finite, as the client's message has it.
fn float_repr(n: f64) -> &'static str {
    if n.is_nan() {
        "nan"
    } else if n > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}
