//! Source encodings: Java files of older projects are often ISO-8859-1, not UTF-8. A file is
//! read as UTF-8 when it is valid UTF-8 and as ISO-8859-1 otherwise, unless an encoding is
//! named; the encoding is kept with the bug so that every file written back (verification, the
//! benchmark export) has the bytes its project expects.

/// The name natstudy stores for UTF-8 (also what a bug without a stored encoding has).
pub const UTF_8: &str = "UTF-8";
/// ISO-8859-1 (Latin-1): every byte is the character of the same number.
pub const LATIN_1: &str = "ISO-8859-1";

/// An encoding a file is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 when valid, else ISO-8859-1.
    Detect,
    Utf8,
    Latin1,
    /// Any other WHATWG label (windows-1252, Shift_JIS, …).
    Other(&'static encoding_rs::Encoding),
}

/// Why a text cannot be read or written in an encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodingError {
    #[error("unknown encoding `{0}`")]
    Unknown(String),
    #[error("not valid {0}")]
    Malformed(String),
    #[error("a character that {0} cannot hold")]
    Unmappable(String),
}

impl Encoding {
    /// Reads a label: `UTF-8`, `ISO-8859-1` (also `latin1`, `iso8859-1`), or a WHATWG label.
    pub fn parse(label: &str) -> Result<Encoding, EncodingError> {
        let l = label.trim().to_ascii_lowercase().replace('_', "-");
        match l.as_str() {
            "utf-8" | "utf8" => Ok(Encoding::Utf8),
            "iso-8859-1" | "iso8859-1" | "latin1" | "latin-1" | "l1" => Ok(Encoding::Latin1),
            _ => encoding_rs::Encoding::for_label(l.as_bytes())
                .map(Encoding::Other)
                .ok_or_else(|| EncodingError::Unknown(label.to_owned())),
        }
    }

    /// The name stored with a bug.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Detect | Encoding::Utf8 => UTF_8,
            Encoding::Latin1 => LATIN_1,
            Encoding::Other(e) => e.name(),
        }
    }
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Decodes a file: its text and the name of the encoding it was read in.
pub fn decode(bytes: &[u8], encoding: Encoding) -> Result<(String, &'static str), EncodingError> {
    match encoding {
        Encoding::Detect => match std::str::from_utf8(bytes) {
            Ok(s) => Ok((s.to_owned(), UTF_8)),
            Err(_) => Ok((latin1(bytes), LATIN_1)),
        },
        Encoding::Utf8 => std::str::from_utf8(bytes)
            .map(|s| (s.to_owned(), UTF_8))
            .map_err(|_| EncodingError::Malformed(UTF_8.into())),
        Encoding::Latin1 => Ok((latin1(bytes), LATIN_1)),
        Encoding::Other(e) => e
            .decode_without_bom_handling_and_without_replacement(bytes)
            .map(|s| (s.into_owned(), e.name()))
            .ok_or_else(|| EncodingError::Malformed(e.name().into())),
    }
}

/// Encodes a text in the encoding a bug was read in (`None`: UTF-8).
pub fn encode(text: &str, name: Option<&str>) -> Result<Vec<u8>, EncodingError> {
    match Encoding::parse(name.unwrap_or(UTF_8))? {
        Encoding::Detect | Encoding::Utf8 => Ok(text.as_bytes().to_vec()),
        Encoding::Latin1 => text
            .chars()
            .map(|c| {
                u8::try_from(u32::from(c)).map_err(|_| EncodingError::Unmappable(LATIN_1.into()))
            })
            .collect(),
        Encoding::Other(e) => {
            let (bytes, _, unmappable) = e.encode(text);
            if unmappable {
                Err(EncodingError::Unmappable(e.name().into()))
            } else {
                Ok(bytes.into_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trips_every_byte() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        let (text, name) = decode(&bytes, Encoding::Detect).expect("decodes");
        assert_eq!(name, LATIN_1);
        assert_eq!(encode(&text, Some(name)).expect("encodes"), bytes);
    }

    #[test]
    fn utf8_is_detected_and_named_encodings_are_strict() {
        assert_eq!(
            decode("é".as_bytes(), Encoding::Detect).expect("utf-8"),
            ("é".to_owned(), UTF_8)
        );
        assert_eq!(
            decode(&[0xe9], Encoding::Utf8),
            Err(EncodingError::Malformed(UTF_8.into()))
        );
        let w = Encoding::parse("windows-1252").expect("a label");
        assert_eq!(decode(&[0x80], w).expect("decodes").0, "€");
        assert!(matches!(
            Encoding::parse("klingon"),
            Err(EncodingError::Unknown(_))
        ));
        assert!(encode("€", Some(LATIN_1)).is_err());
    }
}
