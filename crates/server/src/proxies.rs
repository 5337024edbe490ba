//! Where a request comes from: the connection's peer address or, when the
//! peer is a proxy the operator named in `server.trusted_proxies`, the address
//! that proxy forwarded in `X-Forwarded-For`. Anyone can write that header, so
//! it is read from the right (the hop nearest the daemon) and believed only
//! as far as each hop is a trusted proxy: the first address that is not one is
//! the client.
//!
//! Fuzzed (`fuzz/`, target `forwarded_for`): this file is compiled there as
//! it is, so it uses `http`, `ipnet` and `serde` only.

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;
use ipnet::IpNet;
use serde::{Deserialize, Deserializer};

/// The `server.trusted_proxies` list: addresses (`10.0.0.7`) and networks
/// (`10.0.0.0/8`, `fd00::/8`) whose `X-Forwarded-For` is believed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct TrustedProxies(Vec<Proxy>);

/// One entry of `server.trusted_proxies`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proxy(IpNet);

impl<'de> Deserialize<'de> for Proxy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse::<IpNet>()
            .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
            .map(|net| Proxy(net.trunc()))
            .map_err(|_| {
                serde::de::Error::custom(format!(
                    "'{text}' is not an IP address or network (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)"
                ))
            })
    }
}

/// The header a proxy names the client in.
const FORWARDED_FOR: &str = "x-forwarded-for";

impl TrustedProxies {
    fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|proxy| proxy.0.contains(&address))
    }

    /// The client of a request that arrived from `peer` with `headers`.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = canonical(peer);
        if !self.trusts(client) {
            return client;
        }
        let hops: Vec<&str> = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        for hop in hops.into_iter().rev() {
            // What a trusted proxy wrote that is not an address: the request
            // is the proxy's own.
            let Some(address) = parse_hop(hop) else {
                return client;
            };
            client = address;
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }

    /// No proxy is trusted: the peer's address is the client's.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An address of `X-Forwarded-For`, with or without a port.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(canonical)
}

/// An IPv4 address in IPv6 form (`::ffff:192.0.2.1`) as the IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn proxies(yaml: &str) -> TrustedProxies {
        serde_norway::from_str(yaml).unwrap()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(FORWARDED_FOR, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client_whatever_it_forwards() {
        let none = TrustedProxies::default();
        let headers = forwarded(&["203.0.113.7"]);
        assert_eq!(none.client(ip("10.0.0.7"), &headers), ip("10.0.0.7"));
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_an_untrusted_peer_does_not() {
        let trusted = proxies("[10.0.0.0/8]");
        let headers = forwarded(&["203.0.113.7"]);
        assert_eq!(trusted.client(ip("10.1.2.3"), &headers), ip("203.0.113.7"));
        assert_eq!(trusted.client(ip("192.0.2.1"), &headers), ip("192.0.2.1"));
        // No header: the proxy's own request.
        assert_eq!(
            trusted.client(ip("10.1.2.3"), &HeaderMap::new()),
            ip("10.1.2.3")
        );
    }

    #[test]
    fn addresses_a_client_put_before_the_proxys_are_not_believed() {
        let trusted = proxies("[10.0.0.7, 10.0.0.8]");
        // The client wrote 198.51.100.1; the first proxy added the client's
        // real address, the second the first proxy's.
        let headers = forwarded(&["198.51.100.1, 203.0.113.7", "10.0.0.8"]);
        assert_eq!(trusted.client(ip("10.0.0.7"), &headers), ip("203.0.113.7"));
    }

    #[test]
    fn a_forwarded_value_that_is_not_an_address_leaves_the_proxy_as_the_client() {
        let trusted = proxies("['10.0.0.7']");
        let headers = forwarded(&["unknown"]);
        assert_eq!(trusted.client(ip("10.0.0.7"), &headers), ip("10.0.0.7"));
        let with_port = forwarded(&["203.0.113.7:4711"]);
        assert_eq!(
            trusted.client(ip("10.0.0.7"), &with_port),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn an_ipv4_peer_in_ipv6_form_is_matched_as_ipv4() {
        let trusted = proxies("[127.0.0.1]");
        let headers = forwarded(&["203.0.113.7"]);
        assert_eq!(
            trusted.client(ip("::ffff:127.0.0.1"), &headers),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn an_entry_that_is_not_an_address_is_refused_naming_it() {
        let err = serde_norway::from_str::<TrustedProxies>("[10.0.0.0/8, proxy.local]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("'proxy.local' is not an IP address"), "{err}");
    }
}
