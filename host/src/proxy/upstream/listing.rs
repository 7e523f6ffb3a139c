//! The backend's tools read into the catalogue: tools/list page after page
//! within one deadline and the bounds on what is served, the tools the
//! operator vouches only read marked so, and a digest of them, so that a
//! listing that finds the tools it found before changes nothing.

use std::sync::{Arc, PoisonError};

use rmcp::RoleClient;
use rmcp::service::Peer;

use super::{Notice, Upstream, UpstreamError, classify};
use crate::proxy::catalogue::Catalogue;
use crate::sanitize;

/// Most tools read from a backend's tools/list; the rest are left out
/// (and the log says so).
pub const MAX_TOOLS: usize = 1024;
/// Largest tool kept (its name, description, schemas and annotations), in
/// bytes of JSON; a larger one is left out.
pub const MAX_TOOL_BYTES: usize = 256 << 10;
/// Most bytes of JSON a backend's tools take together: the tools past it
/// are left out (every agent is sent the whole list).
pub const MAX_CATALOGUE_BYTES: usize = 8 << 20;
/// Longest tool name kept, in bytes (MCP's names are 1 to 128 characters).
pub const MAX_NAME_BYTES: usize = 128;
/// Most pages of a paginated tools/list read in one listing: a backend
/// that pages on past it, or gives a cursor twice, is served what was read.
pub const MAX_PAGES: usize = 64;

/// `tools`, those named in `read_only` marked read-only (the operator's
/// word over the backend's annotations); a name the backend does not list
/// is warned about, every listing (a typo, or a tool the backend dropped).
fn vouch_read_only(mut tools: Vec<rmcp::model::Tool>, read_only: &[String]) -> Vec<rmcp::model::Tool> {
    for name in read_only {
        match tools.iter_mut().find(|t| t.name == name.as_str()) {
            Some(tool) => {
                let annotations = tool.annotations.take().unwrap_or_default();
                tool.annotations = Some(annotations.read_only(true));
            }
            None => tracing::warn!(
                tool = %sanitize::escape(name, 64),
                "--read-only names a tool the backend does not list: nothing is marked"
            ),
        }
    }
    tools
}

impl Upstream {
    /// Reads the backend's tools/list into the catalogue and tells sessions
    /// (unless it lists what it listed before).
    pub(super) async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<(), UpstreamError> {
        let (tools, digest) = self.list_tools(peer).await?;
        if *self.listed.lock().unwrap_or_else(PoisonError::into_inner) == Some(digest) {
            tracing::debug!("the backend lists the tools it listed before");
            return Ok(());
        }
        let names: Vec<String> = tools.iter().map(|t| sanitize::escape(&t.name, 64)).collect();
        tracing::info!(tools = ?names, "the backend's tools");
        // Compiling the schemas is CPU work: off the async workers.
        let catalogue = tokio::task::spawn_blocking(move || Catalogue::new(tools))
            .await
            .map_err(|e| UpstreamError::Garbage(format!("reading its tools failed: {e}")))?;
        self.catalogue.store(Arc::new(catalogue));
        *self.listed.lock().unwrap_or_else(PoisonError::into_inner) = Some(digest);
        let _ = self.notices.send(Notice::Tools);
        Ok(())
    }

    /// The backend's tools, page after page, within one deadline and the
    /// bounds on what is served ([`MAX_TOOLS`], [`MAX_TOOL_BYTES`],
    /// [`MAX_CATALOGUE_BYTES`], [`MAX_NAME_BYTES`], [`MAX_PAGES`]; the log
    /// says what was left out), those the operator vouches for marked
    /// read-only; and a digest of them.
    async fn list_tools(&self, peer: &Peer<RoleClient>) -> Result<(Vec<rmcp::model::Tool>, u64), UpstreamError> {
        use std::hash::{Hash, Hasher};
        let deadline = tokio::time::Instant::now() + self.command.timeout;
        let mut kept = Vec::new();
        let (mut listed, mut bytes) = (0usize, 0usize);
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        let mut cursors = std::collections::HashSet::new();
        let mut cursor = None;
        let mut cut_short = None;
        for page in 1.. {
            let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.take());
            let answer = tokio::time::timeout_at(deadline, peer.list_tools(Some(params))).await;
            let result = answer
                .map_err(|_| UpstreamError::Timeout(self.command.timeout))?
                .map_err(|e| classify(e, &self.command.backend))?;
            for tool in result.tools {
                listed += 1;
                let json = serde_json::to_vec(&tool).unwrap_or_default();
                let fits = !json.is_empty()
                    && json.len() <= MAX_TOOL_BYTES
                    && tool.name.len() <= MAX_NAME_BYTES
                    && bytes + json.len() <= MAX_CATALOGUE_BYTES;
                if fits && kept.len() < MAX_TOOLS {
                    bytes += json.len();
                    json.hash(&mut digest);
                    kept.push(tool);
                }
            }
            cut_short = match result.next_cursor {
                None => None,
                Some(_) if kept.len() >= MAX_TOOLS => Some("it lists more tools than are served"),
                Some(_) if page >= MAX_PAGES => Some("it pages on past the most pages read"),
                Some(c) if !cursors.insert(c.clone()) => Some("it gave a cursor twice"),
                Some(c) => {
                    cursor = Some(c);
                    continue;
                }
            };
            break;
        }
        if kept.len() < listed || cut_short.is_some() {
            tracing::warn!(
                listed,
                kept = kept.len(),
                stopped = cut_short.unwrap_or("at its last page"),
                "not every tool the backend lists is served: at most {MAX_TOOLS} tools, {MAX_PAGES} pages, \
                 {MAX_TOOL_BYTES} bytes of JSON a tool and {MAX_CATALOGUE_BYTES} in all, names of at most \
                 {MAX_NAME_BYTES} bytes"
            );
        }
        Ok((vouch_read_only(kept, &self.command.read_only), digest.finish()))
    }
}
