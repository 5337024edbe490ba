//! What must hold for any `X-Forwarded-For`, whoever wrote it: the daemon's
//! source address of a request (`crates/server/src/proxies.rs`) is its peer,
//! or an address the header names, and without trusted proxies always the
//! peer. The input is `TRUSTED\0PEER\0VALUE\0VALUE...`: the trusted list
//! comma-separated, the peer address, and each header value. The corpus replay
//! test (`crates/server/tests/all/fuzz_corpus.rs`) runs it on the real crate.

use std::net::{IpAddr, SocketAddr};

use super::wire::TrustedProxies;

pub fn forwarded_for(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let trusted: Vec<&str> = parts
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .collect();
    let Ok(proxies) = serde_json::from_value::<TrustedProxies>(serde_json::json!(trusted)) else {
        return;
    };
    let Some(peer) = parts.next().and_then(|p| p.parse::<IpAddr>().ok()) else {
        return;
    };
    let mut headers = http::HeaderMap::new();
    let mut named = vec![canonical(peer)];
    for value in parts {
        let Ok(header) = http::HeaderValue::from_str(value) else {
            continue;
        };
        headers.append("x-forwarded-for", header);
        named.extend(value.split(',').filter_map(|hop| {
            let hop = hop.trim();
            hop.parse::<IpAddr>()
                .or_else(|_| hop.parse::<SocketAddr>().map(|s| s.ip()))
                .ok()
                .map(canonical)
        }));
    }
    let client = proxies.client(peer, &headers);
    assert!(
        named.contains(&client),
        "{client} is neither the peer nor named in the header"
    );
    assert_eq!(
        TrustedProxies::default().client(peer, &headers),
        canonical(peer),
        "without trusted proxies the peer is the client"
    );
}

fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}
