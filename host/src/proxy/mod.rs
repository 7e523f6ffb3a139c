//! `signpost proxy`: Signpost in front of another MCP server.
//!
//! The proxy is an MCP client of its backend ([`Upstream`]: a command
//! spoken to over stdio or a URL over streamable HTTP, started or connected
//! to again with back-off when it goes away) and serves
//! the backend's tools as its own ([`Catalogue`]), each call through
//! [`crate::pipeline::forward`]: the policy's prerequisites, the backend's
//! answer, the policy's advice with its hints validated against the
//! backend's input schemas, and the sanitiser with the backend's tool names
//! as the calls it reads.

mod catalogue;
mod upstream;

pub use catalogue::{Catalogue, Shown};
pub use upstream::{Backend, Command, Upstream, UpstreamError};
