//! Signpost's end-to-end tests: one binary (see `tests/README.md`).
//!
//! Everything here drives real parts: the `signpost` binary over stdio with
//! rmcp's MCP client, the default policy component and the hostile `chaos`
//! component built from source by `host/build.rs`, and the default policy
//! compiled natively.

mod agreement;
mod attack;
mod cli;
mod coercion;
mod common;
mod evidence;
mod graphs;
mod hints_walk;
mod hot_swap;
mod http;
mod languages;
mod mcp_stdio;
mod notations;
mod oci;
mod other_hosts;
mod packages;
mod policy_languages;
mod policy_native;
mod properties;
mod proxy;
mod rollout;
mod sandbox;
mod setup;
mod terminal;
mod trails;
mod trails_redis;
mod untrusted;
mod wat_policy;
