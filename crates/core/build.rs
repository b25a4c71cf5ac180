//! Rebuild when a migration is added: `sqlx::migrate!` embeds the folders at compile time and
//! stable Rust does not tell it about new files.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
