pub mod layout;
pub mod status;
