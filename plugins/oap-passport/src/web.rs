//! `web.fetch`: the URL (`url`, or a bare `domain`) must parse as http(s),
//! must not point at this machine or a private network (checked on the
//! WHATWG-normalised host, so `http://2130706433/` is 127.0.0.1), and must
//! pass `blocked_domains`, `allowed_domains` and `allowed_methods` (each
//! looked up, not scanned: issue 28). A search with only a `query` names no
//! destination: allowed unless `allowed_domains` is set.

use std::collections::HashSet;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value};
use url::{Host, Url};

use crate::domains::DomainList;
use crate::passport::Limits;
use crate::{Check, deny};

/// The `web.fetch` limits of a passport, compiled.
#[derive(Debug, Default)]
pub struct WebPolicy {
    blocked: DomainList,
    allowed: Option<DomainList>,
    /// Upper-case.
    methods: Option<HashSet<String>>,
}

impl WebPolicy {
    pub fn compile(limits: Option<&Limits>) -> WebPolicy {
        let Some(limits) = limits else {
            return WebPolicy::default();
        };
        WebPolicy {
            blocked: DomainList::new(limits.blocked_domains.as_deref().unwrap_or_default(), true),
            allowed: (limits.allowed_domains.as_deref()).map(|a| DomainList::new(a, false)),
            methods: (limits.allowed_methods.as_ref())
                .map(|m| m.iter().map(|m| m.to_ascii_uppercase()).collect()),
        }
    }
}

pub fn check(policy: &WebPolicy, args: &Map<String, Value>) -> Check {
    let text = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let target = match (text("url"), text("domain")) {
        (Some(url), _) => url.trim().to_string(),
        (None, Some(domain)) => format!("https://{}", domain.trim()),
        (None, None) => {
            if text("query").is_some() && policy.allowed.is_none() {
                return Ok(());
            }
            return Err(deny(
                "oap.missing_required_context",
                if policy.allowed.is_some() {
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
    if let Some(blocked) = policy.blocked.first(&domain) {
        return Err(deny(
            "oap.domain_blocked",
            format!("{domain} is blocked ({blocked})"),
        ));
    }
    if let Some(allowed) = &policy.allowed
        && allowed.first(&domain).is_none()
    {
        return Err(deny(
            "oap.domain_not_allowed",
            format!("{domain} is not in allowed_domains"),
        ));
    }
    if let Some(methods) = &policy.methods {
        let method = text("method").unwrap_or("GET").to_ascii_uppercase();
        if !methods.contains(&method) {
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
