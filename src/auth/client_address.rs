//! The client's address, which every limit keyed by address counts against.
//!
//! Behind a reverse proxy every connection comes from the proxy, so the socket's peer address
//! would put all clients into one bucket. When (and only when) the peer is one of the configured
//! `server.trusted_proxies`, the address is taken from the forwarding header the proxy writes:
//! the right-most entry that is not itself a trusted proxy. Entries left of it were written by
//! the client or by proxies nobody vouches for, so they are never read; an untrusted peer's
//! header is ignored altogether.

use std::net::{IpAddr, SocketAddr};

use actix_web::http::header::{HeaderMap, HeaderName};
use actix_web::{web, HttpRequest};
use ipnet::IpNet;
use serde::Deserialize;

/// The header a trusted proxy states the client's address in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (nginx, HAProxy, most load balancers).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1` (RFC 7239).
    Forwarded,
}

impl ForwardedHeader {
    fn name(self) -> HeaderName {
        match self {
            ForwardedHeader::XForwardedFor => HeaderName::from_static("x-forwarded-for"),
            ForwardedHeader::Forwarded => actix_web::http::header::FORWARDED,
        }
    }
}

/// The reverse proxies whose forwarding header is believed, and which header that is.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    networks: Vec<IpNet>,
    header: ForwardedHeader,
}

/// Parses `server.trusted_proxies`: addresses (`127.0.0.1`, `::1`) and CIDR ranges
/// (`10.0.0.0/8`); the error names the first entry that is neither.
pub(crate) fn parse_networks(entries: &[String]) -> Result<Vec<IpNet>, String> {
    entries
        .iter()
        .map(|entry| {
            entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map(|net| match net {
                    // An IPv4 range written as IPv4-mapped IPv6 matches the same peers.
                    IpNet::V6(v6) => match v6.addr().to_ipv4_mapped() {
                        Some(v4) if v6.prefix_len() >= 96 => IpNet::V4(
                            ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96).expect("prefix <= 32"),
                        ),
                        _ => net,
                    },
                    IpNet::V4(_) => net,
                })
                .map_err(|_| {
                    format!(
                        "server.trusted_proxies: {entry:?} is neither an IP address nor a CIDR range"
                    )
                })
        })
        .collect()
}

impl TrustedProxies {
    /// Trusts the peers in `entries` (see [`parse_networks`]) to state the client in `header`.
    pub fn new(entries: &[String], header: ForwardedHeader) -> Result<Self, String> {
        Ok(TrustedProxies {
            networks: parse_networks(entries)?,
            header,
        })
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.networks.iter().any(|net| net.contains(&address))
    }

    /// The client behind a connection from `peer` that carried `headers`: the peer itself,
    /// unless it is a trusted proxy; then the right-most forwarded address that is not a trusted
    /// proxy (the left-most when all are). A header that cannot be read there, or is missing,
    /// leaves the peer.
    pub fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer.map(|p| p.to_canonical());
        let Some(proxy) = peer.filter(|&p| self.trusts(p)) else {
            return peer;
        };
        // Several header lines form one list, in order (RFC 9110, section 5.3).
        let mut hops: Vec<&str> = Vec::new();
        for value in headers.get_all(self.header.name()) {
            let Ok(value) = value.to_str() else {
                return Some(proxy);
            };
            hops.extend(split_list(value));
        }
        let mut chosen = None;
        for hop in hops.iter().rev() {
            let address = match self.header {
                ForwardedHeader::XForwardedFor => parse_node(hop.trim()),
                ForwardedHeader::Forwarded => forwarded_for(hop),
            };
            let Some(address) = address.map(|a| a.to_canonical()) else {
                return Some(proxy);
            };
            chosen = Some(address);
            if !self.trusts(address) {
                break;
            }
        }
        chosen.or(Some(proxy))
    }
}

/// The address every limit of `req` is keyed by: the client as [`TrustedProxies::client`] sees
/// it, or the peer where no proxies are registered (the simulator's server).
pub fn client_address(req: &HttpRequest) -> Option<IpAddr> {
    let peer = req.peer_addr().map(|a| a.ip());
    match req.app_data::<web::Data<TrustedProxies>>() {
        Some(proxies) => proxies.client(peer, req.headers()),
        None => peer,
    }
}

/// The entries of a comma-separated header value; commas inside quoted strings (possible in
/// `Forwarded`) do not split.
fn split_list(value: &str) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (at, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&value[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    parts.into_iter().filter(|part| !part.trim().is_empty())
}

/// The `for` parameter of one `Forwarded` element (`for=192.0.2.60;proto=https`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    let mut found = None;
    for pair in element.split(';') {
        let (name, value) = pair.split_once('=')?;
        if name.trim().eq_ignore_ascii_case("for") {
            if found.is_some() {
                return None;
            }
            let value = value.trim();
            let value = match value.strip_prefix('"') {
                Some(rest) => rest.strip_suffix('"')?,
                None => value,
            };
            found = Some(parse_node(value)?);
        }
    }
    found
}

/// An address as proxies write it: `192.0.2.1`, `2001:db8::1`, `192.0.2.1:4711`,
/// `[2001:db8::1]` or `[2001:db8::1]:4711`. `unknown` and obfuscated names are no address.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(address);
    }
    if let Ok(socket) = node.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    node.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn proxies(entries: &[&str], header: ForwardedHeader) -> TrustedProxies {
        let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        TrustedProxies::new(&entries, header).unwrap()
    }

    fn headers(name: &'static str, values: &[&'static str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn the_right_most_untrusted_forwarded_address_is_the_client() {
        let trusted = proxies(&["127.0.0.1", "10.0.0.0/8"], ForwardedHeader::XForwardedFor);
        let peer = ip("127.0.0.1");
        let cases: &[(&[&'static str], &str)] = &[
            (&["203.0.113.7"], "203.0.113.7"),
            (&["198.51.100.1, 203.0.113.7"], "203.0.113.7"),
            (&["203.0.113.7, 10.1.2.3"], "203.0.113.7"),
            (&["198.51.100.1", "203.0.113.7, 10.1.2.3"], "203.0.113.7"),
            (&["garbage, 203.0.113.7"], "203.0.113.7"),
            (&["2001:db8::7"], "2001:db8::7"),
            (&["[2001:db8::7]:4711"], "2001:db8::7"),
            (&["203.0.113.7:4711"], "203.0.113.7"),
            (&["::ffff:203.0.113.7"], "203.0.113.7"),
            // Every hop trusted: the furthest one is the client.
            (&["10.9.9.9, 10.1.2.3"], "10.9.9.9"),
            // Nothing usable where the client should be: the proxy itself.
            (&["203.0.113.7, unknown"], "127.0.0.1"),
            (&["203.0.113.7,,not-an-address"], "127.0.0.1"),
            (&[], "127.0.0.1"),
        ];
        for (values, expected) in cases {
            let got = trusted.client(peer, &headers("x-forwarded-for", values));
            assert_eq!(got, ip(expected), "{values:?}");
        }
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let trusted = proxies(&["127.0.0.1"], ForwardedHeader::XForwardedFor);
        let got = trusted.client(
            ip("127.0.0.2"),
            &headers("x-forwarded-for", &["203.0.113.7"]),
        );
        assert_eq!(got, ip("127.0.0.2"));
        let nobody = TrustedProxies::default();
        let got = nobody.client(
            ip("127.0.0.1"),
            &headers("x-forwarded-for", &["203.0.113.7"]),
        );
        assert_eq!(got, ip("127.0.0.1"));
    }

    #[test]
    fn an_ipv4_mapped_peer_is_its_ipv4_address() {
        let trusted = proxies(&["127.0.0.1"], ForwardedHeader::XForwardedFor);
        let got = trusted.client(
            ip("::ffff:127.0.0.1"),
            &headers("x-forwarded-for", &["203.0.113.7"]),
        );
        assert_eq!(got, ip("203.0.113.7"));
    }

    #[test]
    fn forwarded_reads_the_for_parameter_of_each_element() {
        let trusted = proxies(&["127.0.0.1"], ForwardedHeader::Forwarded);
        let peer = ip("127.0.0.1");
        let cases: &[(&[&'static str], &str)] = &[
            (&["for=203.0.113.7"], "203.0.113.7"),
            (&["For=\"203.0.113.7:4711\";proto=https"], "203.0.113.7"),
            (
                &["for=198.51.100.1, for=\"[2001:db8::7]:4711\""],
                "2001:db8::7",
            ),
            (&["proto=https;for=203.0.113.7;by=127.0.0.1"], "203.0.113.7"),
            (
                &["for=198.51.100.1", "for=203.0.113.7, for=127.0.0.1"],
                "203.0.113.7",
            ),
            (&["for=\"a,b\", for=203.0.113.7"], "203.0.113.7"),
            (&["for=unknown"], "127.0.0.1"),
            (&["for=_hidden"], "127.0.0.1"),
            (&["proto=https"], "127.0.0.1"),
            (&["for=203.0.113.7;for=198.51.100.1"], "127.0.0.1"),
        ];
        for (values, expected) in cases {
            let got = trusted.client(peer, &headers("forwarded", values));
            assert_eq!(got, ip(expected), "{values:?}");
        }
        // The other header is not read.
        let got = trusted.client(peer, &headers("x-forwarded-for", &["203.0.113.7"]));
        assert_eq!(got, peer);
    }

    #[test]
    fn trusted_proxies_are_addresses_or_ranges() {
        let nets = parse_networks(&["127.0.0.1".into(), "10.0.0.0/8".into(), "::1".into()]);
        assert_eq!(nets.unwrap().len(), 3);
        let mapped = proxies(&["::ffff:10.0.0.0/104"], ForwardedHeader::XForwardedFor);
        assert!(mapped.trusts("10.2.3.4".parse().unwrap()));
        let error = parse_networks(&["10.0.0.0/33".into()]).unwrap_err();
        assert_eq!(
            error,
            "server.trusted_proxies: \"10.0.0.0/33\" is neither an IP address nor a CIDR range"
        );
        assert!(parse_networks(&["proxy.example".into()]).is_err());
    }
}
