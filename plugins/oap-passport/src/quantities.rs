//! The limits a call's own arguments can exceed (`oap.limit_exceeded`): the
//! rows of an export (`data.export`: `max_rows`), the amount of one payment
//! (`finance.payment.refund`/`charge`: `currency_limits.CCY.max_per_tx`) and
//! the size of a pull request (`code.repository.merge`: `max_pr_size_kb`, as
//! the reference evaluator estimates it: ten changed lines a kilobyte, else
//! the number of files changed).
//!
//! A limit the passport sets must be checkable: a call that does not state the
//! quantity is `oap.missing_required_context`, as a command without its
//! timeout is. Limits over time (`daily_cap`, `msgs_per_day`, ...) need a count
//! kept across calls, which pooled instances do not share: they are accepted
//! and not enforced here (README, "Open Agent Passport provider").

use serde_json::{Map, Value};

use crate::passport::Limits;
use crate::{Check, deny};

/// The first of `keys` the call gives, as a non-negative number.
fn quantity(
    args: &Map<String, Value>,
    keys: &[&str],
) -> Result<Option<(String, f64)>, crate::Denial> {
    for key in keys {
        match args.get(*key) {
            None | Some(Value::Null) => continue,
            Some(v) => {
                return match v.as_f64().filter(|n| n.is_finite() && *n >= 0.0) {
                    Some(n) => Ok(Some(((*key).to_string(), n))),
                    None => Err(deny(
                        "oap.invalid_tool_arguments",
                        format!("`{key}` must be a non-negative number"),
                    )),
                };
            }
        }
    }
    Ok(None)
}

fn required(
    found: Option<(String, f64)>,
    keys: &[&str],
    limit: &str,
) -> Result<(String, f64), crate::Denial> {
    found.ok_or_else(|| {
        deny(
            "oap.missing_required_context",
            format!(
                "the passport sets {limit}: the call must give {}",
                keys.iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )
    })
}

/// `data.export`: the rows asked for against `max_rows`.
pub fn export(limits: Option<&Limits>, args: &Map<String, Value>) -> Check {
    let Some(max) = limits.and_then(|l| l.max_rows) else {
        return Ok(());
    };
    const KEYS: &[&str] = &["rows", "row_count", "limit", "max_rows"];
    let (key, rows) = required(quantity(args, KEYS)?, KEYS, "max_rows")?;
    if rows > max {
        return Err(deny(
            "oap.limit_exceeded",
            format!("`{key}` is {rows}; the passport allows at most {max} rows an export"),
        ));
    }
    Ok(())
}

/// `finance.payment.*`: the amount of one payment against its currency's `max_per_tx`.
pub fn payment(limits: Option<&Limits>, args: &Map<String, Value>) -> Check {
    let Some(currencies) = limits.and_then(|l| l.currency_limits.as_ref()) else {
        return Ok(());
    };
    let Some(currency) = args
        .get("currency")
        .and_then(Value::as_str)
        .map(|c| c.trim().to_ascii_uppercase())
        .filter(|c| !c.is_empty())
    else {
        return Err(deny(
            "oap.missing_required_context",
            "the passport sets currency_limits: the call must give its `currency`",
        ));
    };
    let Some((_, limit)) = currencies
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(&currency))
    else {
        return Err(deny(
            "oap.currency_unsupported",
            format!("the passport sets no limit for {currency}"),
        ));
    };
    let Some(max) = limit.max_per_tx else {
        return Ok(());
    };
    const KEYS: &[&str] = &["amount"];
    let (_, amount) = required(quantity(args, KEYS)?, KEYS, "max_per_tx")?;
    if amount > max {
        return Err(deny(
            "oap.limit_exceeded",
            format!(
                "the amount is {amount} {currency}; the passport allows at most {max} a payment"
            ),
        ));
    }
    Ok(())
}

/// `code.repository.merge`: the size of a pull request against `max_pr_size_kb`.
pub fn pull_request(limits: Option<&Limits>, args: &Map<String, Value>) -> Check {
    let Some(max) = limits.and_then(|l| l.max_pr_size_kb) else {
        return Ok(());
    };
    let added = quantity(args, &["lines_added", "additions"])?;
    let removed = quantity(args, &["lines_removed", "deletions"])?;
    if added.is_some() || removed.is_some() {
        let lines = added.map_or(0.0, |(_, n)| n) + removed.map_or(0.0, |(_, n)| n);
        let kb = (lines / 10.0).ceil();
        if kb > max {
            return Err(deny(
                "oap.limit_exceeded",
                format!(
                    "the pull request is about {kb} KB ({lines} lines); the passport allows {max} KB"
                ),
            ));
        }
        return Ok(());
    }
    let files = match args.get("files_changed") {
        Some(Value::Array(files)) => Some(("files_changed".to_string(), files.len() as f64)),
        _ => quantity(args, &["files_changed", "files"])?,
    };
    const KEYS: &[&str] = &["lines_added", "lines_removed", "files_changed"];
    let (_, files) = required(files, KEYS, "max_pr_size_kb")?;
    if files > max {
        return Err(deny(
            "oap.limit_exceeded",
            format!("the pull request changes {files} files; the passport allows {max}"),
        ));
    }
    Ok(())
}
