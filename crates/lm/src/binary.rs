//! A compact binary form of a model for fast loading: little-endian, length-prefixed.
//! Layout: magic `NSLM1\0`, order (u32), vocabulary (count u32, then per word: len u32 + UTF-8),
//! then per order: count (u64), per n-gram: word ids (u32 × n), prob (f32), backoff (f32).

use std::io::{Read, Write};

use super::{Entry, LmError, Model};

const MAGIC: &[u8; 6] = b"NSLM1\0";

fn bad(reason: &str) -> LmError {
    LmError::Estimate(format!("binary model: {reason}"))
}

pub fn write(model: &Model, out: &mut dyn Write) -> Result<(), LmError> {
    out.write_all(MAGIC)?;
    out.write_all(&(model.order() as u32).to_le_bytes())?;
    out.write_all(&(model.words.len() as u32).to_le_bytes())?;
    for w in &model.words {
        out.write_all(&(w.len() as u32).to_le_bytes())?;
        out.write_all(w.as_bytes())?;
    }
    for grams in &model.grams {
        out.write_all(&(grams.len() as u64).to_le_bytes())?;
        for (g, e) in grams {
            for id in g {
                out.write_all(&id.to_le_bytes())?;
            }
            out.write_all(&(e.prob as f32).to_le_bytes())?;
            out.write_all(&(e.backoff as f32).to_le_bytes())?;
        }
    }
    Ok(())
}

fn u32_of(input: &mut dyn Read) -> Result<u32, LmError> {
    let mut b = [0u8; 4];
    input.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn f32_of(input: &mut dyn Read) -> Result<f32, LmError> {
    let mut b = [0u8; 4];
    input.read_exact(&mut b)?;
    Ok(f32::from_le_bytes(b))
}

/// Reads a binary model. Memory grows with the bytes read, never with the counts the file
/// declares.
pub fn read(input: &mut dyn Read) -> Result<Model, LmError> {
    let mut magic = [0u8; 6];
    input.read_exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(bad("not a natstudy binary model"));
    }
    let order = u32_of(input)? as usize;
    if !(1..=super::arpa::MAX_ORDER).contains(&order) {
        return Err(bad("unsupported order"));
    }
    let words = u32_of(input)? as usize;
    let mut model = Model::default();
    for _ in 0..words {
        let len = u32_of(input)? as usize;
        if len > 1 << 20 {
            return Err(bad("word too long"));
        }
        // read what is there, never more than the length claims
        let mut b = Vec::new();
        (&mut *input).take(len as u64).read_to_end(&mut b)?;
        if b.len() != len {
            return Err(bad("truncated vocabulary"));
        }
        let w = String::from_utf8(b).map_err(|_| bad("word is not UTF-8"))?;
        if model.intern(&w) as usize != model.words.len() - 1 {
            return Err(bad("a word appears twice in the vocabulary"));
        }
    }
    for n in 1..=order {
        let mut b = [0u8; 8];
        input.read_exact(&mut b)?;
        let count = u64::from_le_bytes(b);
        // The count is the file's claim: the table grows with the n-grams actually read
        // (a truncated file fails at its end).
        let mut grams = std::collections::HashMap::new();
        for _ in 0..count {
            let mut g = Vec::with_capacity(n);
            for _ in 0..n {
                let id = u32_of(input)?;
                if id as usize >= words {
                    return Err(bad("word id out of range"));
                }
                g.push(id);
            }
            let prob = f64::from(f32_of(input)?);
            let backoff = f64::from(f32_of(input)?);
            grams.insert(g, Entry { prob, backoff });
        }
        model.grams.push(grams);
    }
    Ok(model)
}

/// Loads a model to score with: a probing file (`NSLM2`) as it lies, else the model read (the
/// older binary form or ARPA) and laid out for probing.
pub fn load_scorer(path: &std::path::Path) -> Result<super::Scorer, LmError> {
    let mut head = [0u8; 8];
    let n = std::io::BufReader::new(std::fs::File::open(path)?).read(&mut head)?;
    if n == 8 && &head == super::probing::MAGIC {
        return Ok(super::Scorer::Probing(super::probing::ProbingModel::load(
            path,
        )?));
    }
    super::Scorer::from_model(load(path)?)
}

/// Loads a model from a path: the older binary form when it starts with its magic, else ARPA.
pub fn load(path: &std::path::Path) -> Result<Model, LmError> {
    let mut f = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut head = [0u8; 6];
    let n = f.read(&mut head)?;
    drop(f);
    let f = std::io::BufReader::new(std::fs::File::open(path)?);
    if n == 6 && &head == MAGIC {
        let mut f = f;
        read(&mut f)
    } else {
        super::arpa::read(f)
    }
}
