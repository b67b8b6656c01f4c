//! Host patterns of accounts: matching a client address and ordering
//! accounts from most to least specific.
//!
//! Basalt serves TCP only and never resolves names (`skip_name_resolve`),
//! so a client host is always an IP address. Patterns:
//!
//! * `localhost` matches the loopback addresses (`127.0.0.0/8`, `::1`):
//!   MySQL's `localhost` means "this machine" (its Unix socket), and over
//!   TCP this machine is the loopback interface. So the bootstrap account
//!   `root@localhost` is usable with `-h127.0.0.1`.
//! * `%` and `_` are wildcards (`192.168.1.%`), `\` escapes them;
//!   comparison ignores case (IPv6 hex digits).
//! * `a.b.c.d/m.m.m.m` is an IPv4 address with a netmask.
//! * anything else must equal the address (IPv4-mapped IPv6 addresses
//!   compare as IPv4).
//!
//! Order (MySQL's): patterns without wildcards first, then netmasks, then
//! wildcard patterns with the later first wildcard first, `%` last; within
//! equal hosts, named users before the anonymous user.

use std::net::{IpAddr, Ipv4Addr};

use basalt_common::like::like_match;

fn parse_ip(s: &str) -> Option<IpAddr> {
    let ip: IpAddr = s
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()?;
    Some(match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    })
}

/// True for loopback addresses.
pub fn is_loopback(client: &str) -> bool {
    parse_ip(client).is_some_and(|ip| ip.is_loopback())
}

/// Whether account host `pattern` matches the client address `client`.
pub fn host_matches(pattern: &str, client: &str) -> bool {
    if pattern.eq_ignore_ascii_case("localhost") {
        return is_loopback(client) || client.eq_ignore_ascii_case("localhost");
    }
    if let Some((ip, mask)) = pattern.split_once('/') {
        let (Ok(ip), Ok(mask)) = (ip.parse::<Ipv4Addr>(), mask.parse::<Ipv4Addr>()) else {
            return false;
        };
        return match parse_ip(client) {
            Some(IpAddr::V4(c)) => u32::from(c) & u32::from(mask) == u32::from(ip),
            _ => false,
        };
    }
    let client_text = match parse_ip(client) {
        Some(ip) => ip.to_string(),
        None => client.to_string(),
    };
    if pattern.contains(['%', '_']) {
        return like_match(pattern, &client_text, true);
    }
    match (parse_ip(pattern), parse_ip(client)) {
        (Some(a), Some(b)) => a == b,
        _ => pattern.eq_ignore_ascii_case(&client_text),
    }
}

/// Sort key of an account: smaller sorts first (more specific).
pub fn specificity(user: &str, host: &str) -> (u8, usize, bool, String) {
    let wildcard = host
        .char_indices()
        .find(|(i, c)| (*c == '%' || *c == '_') && !host[..*i].ends_with('\\'))
        .map(|(i, _)| i);
    let (class, pos) = if host.is_empty() || host == "%" {
        (3, 0)
    } else if host.contains('/') {
        (1, 0)
    } else if let Some(i) = wildcard {
        (2, usize::MAX - i)
    } else {
        (0, 0)
    };
    (class, pos, user.is_empty(), host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", "::1"));
        assert!(host_matches("LOCALHOST", "127.0.0.5"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        assert!(host_matches("%", "10.0.0.1"));
        assert!(host_matches("10.0.0.%", "10.0.0.7"));
        assert!(!host_matches("10.0.0.%", "10.0.1.7"));
        assert!(host_matches("10.0.0._", "10.0.0.7"));
        assert!(!host_matches("10.0.0._", "10.0.0.70"));
        assert!(host_matches("10.0.0.0/255.255.255.0", "10.0.0.9"));
        assert!(!host_matches("10.0.0.0/255.255.255.0", "10.0.1.9"));
        assert!(host_matches("127.0.0.1", "::ffff:127.0.0.1"));
        assert!(!host_matches("127.0.0.1", "127.0.0.2"));
    }

    #[test]
    fn ordering() {
        let mut hosts = [
            ("", "%"),
            ("a", "%"),
            ("a", "10.%"),
            ("a", "10.0.0.%"),
            ("a", "10.0.0.1"),
            ("a", "10.0.0.0/255.0.0.0"),
            ("a", "localhost"),
        ];
        hosts.sort_by_key(|(u, h)| specificity(u, h));
        let order: Vec<&str> = hosts.iter().map(|(_, h)| *h).collect();
        assert_eq!(
            order,
            vec![
                "10.0.0.1",
                "localhost",
                "10.0.0.0/255.0.0.0",
                "10.0.0.%",
                "10.%",
                "%",
                "%"
            ]
        );
        assert_eq!(hosts[5].0, "a", "named user before anonymous");
    }
}
