//! Recognised devices: a browser that once signed in to an account carries a signed, long-lived
//! cookie saying so. Sign-in attempts from such a device skip the per-account throttle, which
//! strangers share: many addresses guessing one account's password slow the strangers, not the
//! account's owner at their usual browser (`throttle::Throttle::attempt`).
//!
//! A token is `ID.MAC`: 16 random bytes, and HMAC-SHA256 over the account name (lower case)
//! and the id under a key only the server knows. It proves nothing but an earlier successful
//! sign-in to that account from that browser, and is checked in constant time.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The key device tokens are signed with.
#[derive(Clone)]
pub struct DeviceKey([u8; 32]);

impl std::fmt::Debug for DeviceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceKey(..)")
    }
}

/// The device cookie's name.
pub const COOKIE: &str = natstudy_types::cookie::DEVICE_COOKIE;
/// How long a device stays recognised after its last sign-in.
pub const MAX_AGE_SECS: u64 = 365 * 24 * 3600;

impl DeviceKey {
    /// A key derived from a server secret (the cookie-signing key's bytes): one secret to keep,
    /// and a key of its own for this use.
    pub fn derive(secret: &[u8]) -> DeviceKey {
        let mut h = Sha256::new();
        h.update(b"natstudy device cookie\0");
        h.update(secret);
        DeviceKey(h.finalize().into())
    }

    fn mac(&self, username: &str, id: &str) -> HmacSha256 {
        let mut m = match <HmacSha256 as Mac>::new_from_slice(&self.0) {
            Ok(m) => m,
            Err(_) => unreachable!("HMAC takes a key of any length"),
        };
        m.update(username.to_lowercase().as_bytes());
        m.update(b"\0");
        m.update(id.as_bytes());
        m
    }

    /// A fresh token for a browser that just signed in to `username`.
    pub fn token(&self, username: &str) -> String {
        use rand::RngCore;
        let mut raw = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut raw);
        let id = hex::encode(raw);
        let mac = hex::encode(self.mac(username, &id).finalize().into_bytes());
        format!("{id}.{mac}")
    }

    /// Whether `token` is one this server gave a browser that signed in to `username`.
    pub fn recognises(&self, token: &str, username: &str) -> bool {
        let Some((id, mac)) = token.split_once('.') else {
            return false;
        };
        if id.len() != 32 || mac.len() != 64 {
            return false;
        }
        let Ok(mac) = hex::decode(mac) else {
            return false;
        };
        self.mac(username, id).verify_slice(&mac).is_ok()
    }

    /// The `Set-Cookie` value that gives a browser its token: signed, HttpOnly, SameSite=Lax,
    /// a year long, Secure when the site is served over HTTPS.
    pub fn set_cookie(&self, username: &str, secure: bool) -> String {
        format!(
            "{COOKIE}={}; Path=/api/login; Max-Age={MAX_AGE_SECS}; HttpOnly; SameSite=Lax{}",
            self.token(username),
            if secure { "; Secure" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_recognises_its_account_and_nothing_else() {
        let key = DeviceKey::derive(b"server secret");
        let t = key.token("Rita");
        assert!(
            key.recognises(&t, "rita"),
            "names are matched in lower case"
        );
        assert!(!key.recognises(&t, "rob"));
        assert!(!DeviceKey::derive(b"another").recognises(&t, "rita"));
        let (id, mac) = t.split_once('.').expect("id.mac");
        let mut forged = mac.to_owned();
        forged.replace_range(0..1, if &mac[0..1] == "0" { "1" } else { "0" });
        assert!(!key.recognises(&format!("{id}.{forged}"), "rita"));
        for junk in ["", ".", "x.y", &format!("{id}.zz"), &"a".repeat(97)] {
            assert!(!key.recognises(junk, "rita"), "{junk}");
        }
        assert_ne!(
            key.token("rita"),
            key.token("rita"),
            "a device id of its own"
        );
    }

    #[test]
    fn the_cookie_is_http_only_and_found_in_a_header() {
        let key = DeviceKey::derive(b"s");
        let c = key.set_cookie("ann", true);
        assert!(c.starts_with("natstudy.device="));
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.ends_with("; Secure"));
        let value = c
            .split(';')
            .next()
            .and_then(|kv| kv.split_once('='))
            .map(|(_, v)| v)
            .expect("value");
        let header = format!("natstudy.sid=abc; natstudy.device={value}; other=1");
        assert_eq!(natstudy_types::cookie::device_token(&header), Some(value));
        assert!(key.recognises(value, "ann"));
        assert_eq!(
            natstudy_types::cookie::device_token("natstudy.sid=abc"),
            None
        );
    }
}
