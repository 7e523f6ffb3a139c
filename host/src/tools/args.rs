//! The tools' arguments, as agents send them (their input schemas derive
//! from these types).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::graph::Direction;

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// A name (`OrderService`), a qualified name
    /// (`com.acme.shop.orders.OrderService`), a qualified suffix
    /// (`OrderService.placeOrder`) or a 40-hex id.
    pub identifier: String,
    /// Only symbols of this kind: class, interface, method, field, module, route, topic, …
    #[serde(default)]
    pub kind: Option<String>,
}

/// Arguments of `describe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeArgs {
    /// The symbol's 40-hex id, as returned by resolve, search, find or neighbors.
    #[schemars(with = "String")]
    pub id: Value,
}

/// Arguments of `find`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// Exact kind: class, interface, method, field, module, route, topic, …
    #[serde(default)]
    pub kind: Option<String>,
    /// Exact role: controller, service, repository, entity, dto, http_client, producer, consumer, handler, …
    #[serde(default)]
    pub role: Option<String>,
    /// Case-insensitive substring of the symbol's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Substring of the symbol's file path.
    #[serde(default)]
    pub path: Option<String>,
    /// Page size, 1 to 100.
    #[serde(default = "default_find_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to look for in names, qualified names and docs; fuzzy.
    pub query: String,
    /// Page size, 1 to 100.
    #[serde(default = "default_search_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

/// Arguments of `neighbors`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NeighborsArgs {
    /// Ids of the symbols to start from: a JSON array of 40-hex id strings.
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub ids: Value,
    /// `out` follows edges from the symbols, `in` follows edges into them.
    pub direction: Direction,
    /// Edge types to follow: CALLS, DECLARES, REFERENCES, IMPLEMENTS, EXTENDS, OVERRIDES,
    /// EXPOSES, TARGETS, PUBLISHES, SUBSCRIBES, or dotted chains such as DECLARES.EXPOSES
    /// (members' routes).
    #[schemars(length(min = 1))]
    pub edge_types: Vec<String>,
    /// Page size, 1 to 100.
    #[serde(default = "default_find_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Results to skip, for paging.
    #[serde(default)]
    #[schemars(range(max = 1_000_000))]
    pub offset: u32,
}

fn default_find_limit() -> u32 {
    25
}

fn default_search_limit() -> u32 {
    10
}
