//! Addresses a participant is sent to, and the encoding of what goes into them.

/// `url` with every `{code}` replaced by `code`, percent-encoded as RFC 3986's unreserved
/// characters allow (a code of letters and digits, as the platforms issue, reads as itself).
pub fn fill_code(url: &str, code: Option<&str>) -> String {
    let encoded = percent_encoding::utf8_percent_encode(code.unwrap_or(""), NOT_UNRESERVED);
    url.replace("{code}", &encoded.to_string())
}

/// Every byte but RFC 3986's unreserved characters (letters, digits, `-`, `.`, `_`, `~`).
pub const NOT_UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
