pub mod annotate;
pub mod home;
pub mod login;
pub mod not_found;
pub mod review;
pub mod study;
pub mod users;
