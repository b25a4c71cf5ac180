pub mod annotate;
pub mod generate;
pub mod home;
pub mod login;
pub mod not_found;
pub mod studies;
pub mod study_admin;
pub mod users;
