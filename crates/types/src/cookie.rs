//! The device cookie's name, read by the sign-in page's server function and set by the service
//! that recognises devices (`service::devices`).

/// The cookie that marks a device that signed in before.
pub const DEVICE_COOKIE: &str = "natstudy.device";

/// The device token in a `Cookie` header's value (`natstudy.device=…`), if there is one.
pub fn device_token(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == DEVICE_COOKIE)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_found_among_other_cookies_and_only_under_its_name() {
        assert_eq!(
            device_token("natstudy.sid=abc; natstudy.device=t0k; other=1"),
            Some("t0k")
        );
        assert_eq!(device_token("natstudy.sid=abc"), None);
        assert_eq!(device_token("xnatstudy.device=t0k"), None);
    }
}
