//! `web.fetch`: the URL (`url`, or a bare `domain`) must parse as http(s),
//! must not point at this machine or a private network (checked on the
//! WHATWG-normalised host, so `http://2130706433/` is 127.0.0.1), and must
//! pass `blocked_domains`, `allowed_domains` and `allowed_methods`. A search
//! with only a `query` names no destination: allowed unless `allowed_domains`
//! is set.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value};
use url::{Host, Url};

use crate::passport::Limits;
use crate::{Check, deny};

pub fn check(limits: Option<&Limits>, args: &Map<String, Value>) -> Check {
    let none = Limits::default();
    let limits = limits.unwrap_or(&none);
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let target = match (text("url"), text("domain")) {
        (Some(url), _) => url.trim().to_string(),
        (None, Some(domain)) => format!("https://{}", domain.trim()),
        (None, None) => {
            if text("query").is_some() && limits.allowed_domains.is_none() {
                return Ok(());
            }
            return Err(deny(
                "oap.missing_required_context",
                if limits.allowed_domains.is_some() {
                    "the passport limits the domains: the call must name a `url` or `domain`"
                } else {
                    "the call has no `url`, `domain` or `query`"
                },
            ));
        }
    };
    let url = Url::parse(&target).map_err(|e| {
        deny(
            "oap.invalid_url",
            format!("'{target}' is not a valid URL: {e}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(deny(
            "oap.invalid_url",
            format!("'{target}': only http and https URLs may be fetched"),
        ));
    }
    let host = url
        .host()
        .ok_or_else(|| deny("oap.invalid_url", format!("'{target}' has no host")))?;
    let domain = match host {
        Host::Ipv4(ip) if private_v4(ip) => return Err(private(&target)),
        Host::Ipv6(ip) if private_v6(ip) => return Err(private(&target)),
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") {
                return Err(private(&target));
            }
            d
        }
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => ip.to_string(),
    };
    if let Some(blocked) = limits
        .blocked_domains
        .iter()
        .flatten()
        .find(|b| domain_matches(&domain, b, true))
    {
        return Err(deny(
            "oap.domain_blocked",
            format!("{domain} is blocked ({blocked})"),
        ));
    }
    if let Some(allowed) = &limits.allowed_domains
        && !allowed.iter().any(|a| domain_matches(&domain, a, false))
    {
        return Err(deny(
            "oap.domain_not_allowed",
            format!("{domain} is not in allowed_domains"),
        ));
    }
    if let Some(methods) = &limits.allowed_methods {
        let method = text("method").unwrap_or("GET").to_ascii_uppercase();
        if !methods.iter().any(|m| m.eq_ignore_ascii_case(&method)) {
            return Err(deny(
                "oap.method_not_allowed",
                format!("method {method} is not in allowed_methods"),
            ));
        }
    }
    Ok(())
}

fn private(target: &str) -> crate::Denial {
    deny(
        "oap.private_network_destination",
        format!("'{target}' points at this machine or a private network"),
    )
}

/// `example.com` matches itself; `*.example.com` its subdomains. A blocked
/// entry also blocks the subdomains of a plain domain.
fn domain_matches(domain: &str, entry: &str, subdomains_too: bool) -> bool {
    let entry = entry.trim().trim_end_matches('.').to_ascii_lowercase();
    if let Some(parent) = entry.strip_prefix("*.") {
        return domain.len() > parent.len() + 1
            && domain.ends_with(parent)
            && domain.as_bytes()[domain.len() - parent.len() - 1] == b'.';
    }
    domain == entry
        || (subdomains_too
            && domain.len() > entry.len() + 1
            && domain.ends_with(&entry)
            && domain.as_bytes()[domain.len() - entry.len() - 1] == b'.')
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
}

fn private_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return private_v4(v4);
    }
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
}
