//! The transport under the web adapter: how many connections the server holds, from whom, and
//! how long a client may keep one busy (`connections`), and the pace a request body must keep
//! (`body_pace`). It knows hyper and tokio, not the routes, the pages or the services.

pub mod body_pace;
pub mod connections;
