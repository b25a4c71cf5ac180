//! GGUF bytes crafted to make a reader allocate, divide or multiply by what they declare,
//! shared by the engine's tests (`formats.rs`) and the command's (`tests/tests/nlm.rs`, which
//! includes this file by its path: the engine cannot be a dev-dependency of its own tests'
//! crate and the other way round).

/// A GGUF header of version 3 with these metadata entries (already encoded: key, type, value)
/// and no tensors.
pub fn header(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&0u64.to_le_bytes());
    v.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        v.extend_from_slice(e);
    }
    v
}

/// A metadata entry: its key, then the type and value bytes.
pub fn entry(key: &str, typed_value: &[u8]) -> Vec<u8> {
    let mut v = (key.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(key.as_bytes());
    v.extend_from_slice(typed_value);
    v
}

/// A header whose one entry, `general.alignment`, is the u32 0 (candle's reader divides by it).
pub fn zero_alignment() -> Vec<u8> {
    let mut alignment = 4u32.to_le_bytes().to_vec(); // a u32
    alignment.extend_from_slice(&0u32.to_le_bytes());
    header(&[entry("general.alignment", &alignment)])
}

/// A GGUF file (the bytes of a llama one) with its embedding's two dimensions set to
/// 2³² × 2³², a product that overflows.
pub fn huge_embedding(mut file: Vec<u8>) -> Vec<u8> {
    let name = b"token_embd.weight";
    let mut needle = (name.len() as u64).to_le_bytes().to_vec();
    needle.extend_from_slice(name);
    let at = file
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .expect("the embedding's tensor info")
        + needle.len();
    assert_eq!(file[at..at + 4], 2u32.to_le_bytes(), "two dimensions");
    for d in 0..2 {
        let from = at + 4 + 8 * d;
        file[from..from + 8].copy_from_slice(&(1u64 << 32).to_le_bytes());
    }
    file
}
