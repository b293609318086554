//! Who may talk to the viewer: the secret token every URL starts with, and the `Host`
//! header check that defeats DNS rebinding.
//!
//! The token is 160 random bits from the operating system in lowercase base32, so it
//! cannot be guessed, and it is compared in constant time. A browser tricked into
//! resolving an attacker's name to 127.0.0.1 still sends the attacker's name as
//! `Host`, which is refused: only loopback names (and, when the user explicitly serves
//! on another address, that address) are accepted.

use std::net::IpAddr;

use subtle::ConstantTimeEq;

/// Random bytes in a token.
const TOKEN_BYTES: usize = 20;

/// A fresh random token, e.g. `k3n…` (32 characters of `a–z2–7`).
pub fn generate_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(base32(&bytes))
}

/// `bytes` in RFC 4648 base32 without padding, lowercase (URLs read better that way).
fn base32(bytes: &[u8]) -> String {
    data_encoding::BASE32_NOPAD
        .encode(bytes)
        .to_ascii_lowercase()
}

/// Whether `candidate` equals `token`, in time independent of where they differ.
pub fn token_matches(candidate: &str, token: &str) -> bool {
    // Slices of different lengths differ at once; a token's length is no secret.
    candidate.as_bytes().ct_eq(token.as_bytes()).into()
}

/// The `Host` header values the server accepts.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// The address the server listens on.
    pub bound: IpAddr,
}

impl HostPolicy {
    /// Whether a request with this `Host` header (name or address, optional port) may
    /// be served. Loopback names are always accepted; another address only when the
    /// server was explicitly bound to it (or to every address).
    pub fn allows(&self, host: &str) -> bool {
        let name = strip_port(host);
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        let Ok(ip) = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        else {
            return false;
        };
        ip.is_loopback()
            || (!self.bound.is_loopback() && (self.bound.is_unspecified() || ip == self.bound))
    }
}

/// `host:port` → `host`; `[::1]:port` → `[::1]`.
fn strip_port(host: &str) -> &str {
    if let Some(end) = host.find(']') {
        return &host[..=end];
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_lowercase() || (b'2'..=b'7').contains(&c))
        );
        assert!(token_matches(&a, &a.clone()));
        assert!(!token_matches(&a, &b));
        assert!(!token_matches(&a[..31], &a));
        assert_eq!(base32(&[0xff, 0x00]), "74aa");
    }

    #[test]
    fn only_loopback_hosts_on_a_loopback_server() {
        let policy = HostPolicy {
            bound: "127.0.0.1".parse().unwrap(),
        };
        for ok in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:99",
            "127.0.0.1",
        ] {
            assert!(policy.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "10.0.0.1:80",
            "127.0.0.1.evil.example",
            "",
            "[::2]:1",
        ] {
            assert!(!policy.allows(bad), "{bad}");
        }
        let remote = HostPolicy {
            bound: "10.1.2.3".parse().unwrap(),
        };
        assert!(remote.allows("10.1.2.3:80") && remote.allows("localhost"));
        assert!(!remote.allows("10.1.2.4:80") && !remote.allows("evil.example"));
    }
}
