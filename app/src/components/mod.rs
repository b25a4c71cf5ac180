pub mod layout;
pub mod refresh;
pub mod status;
