//! Where the backend is ([`Backend`]: a command, or a URL with its token
//! and headers) and how it is reached ([`Command`]: each call's deadline,
//! the tools the operator vouches only read); its URL's secrets kept out of
//! messages and logs ([`Backend::hide`], [`url_holds_secrets`],
//! [`CLIENT_TRANSPORT_LOGS`]).

use std::ffi::OsString;
use std::time::Duration;

/// Where the backend is. Its `Debug` shows no token or header value.
#[derive(Clone)]
pub enum Backend {
    /// A program and its arguments, spoken to over its stdin and stdout.
    Command(Vec<OsString>),
    /// A streamable HTTP endpoint.
    Url {
        /// e.g. `https://mcp.example.com/mcp`.
        url: String,
        /// Sent as `Authorization: Bearer …` with every request.
        token: Option<String>,
        /// Other headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Command(argv) => f.debug_tuple("Command").field(&argv.first()).finish_non_exhaustive(),
            Backend::Url { url, headers, .. } => {
                let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
                f.debug_struct("Url").field("url", &shown_url(url)).field("headers", &names).finish_non_exhaustive()
            }
        }
    }
}

impl Backend {
    /// `text` (an error's message: reqwest's and rmcp's name the URL they
    /// failed on) without this backend's secrets: its URL, as written or
    /// as parsed, shown as [`shown_url`] shows it; its query, password and
    /// fragment nowhere.
    pub fn hide(&self, text: &str) -> String {
        let Backend::Url { url, .. } = self else { return text.to_owned() };
        let shown = shown_url(url);
        let mut out = text.replace(url.as_str(), &shown);
        let parsed = reqwest::Url::parse(url).ok();
        if let Some(u) = &parsed {
            out = out.replace(u.as_str(), &shown);
        }
        let written = url.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or(q));
        let parts = parsed.iter().flat_map(|u| [u.query(), u.password(), u.fragment()]).flatten();
        // (a part of a few characters is no secret, and is too common a
        // string to cut out of a message)
        for secret in parts.chain(written).filter(|s| s.len() >= 4) {
            out = out.replace(secret, "…");
        }
        out
    }
}

/// Whether `url` holds what may be a secret (a query, a password), which
/// the log lines of rmcp's HTTP client ([`CLIENT_TRANSPORT_LOGS`]) would
/// show: an unreadable URL may too.
pub fn url_holds_secrets(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(u) => u.query().is_some() || u.password().is_some() || u.fragment().is_some(),
        Err(_) => url.contains(['?', '@', '#']),
    }
}

/// The log targets whose lines can show the URL a request failed on,
/// query included (rmcp's HTTP client and service, reqwest): silenced for
/// a backend URL that holds secrets ([`url_holds_secrets`]), the agents'
/// side of rmcp's service with them; Signpost's own lines say what failed,
/// without them ([`Backend::hide`]).
pub const CLIENT_TRANSPORT_LOGS: [&str; 5] = [
    "rmcp::transport::worker",
    "rmcp::transport::streamable_http_client",
    "rmcp::transport::common::client_side_sse",
    // (its own lines about a request it could not send show the error)
    "rmcp::service",
    // (`redirecting` shows the URL whole)
    "reqwest",
];

/// A URL as it may be shown: scheme, host, port and path, never the user
/// information or the query (either may hold a secret).
pub(super) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{}{port}{}", u.scheme(), u.host_str().unwrap_or("?"), u.path())
        }
        Err(_) => "(an unreadable URL)".to_owned(),
    }
}

/// How the backend is reached, and each call's deadline.
#[derive(Debug, Clone)]
pub struct Command {
    /// The backend.
    pub backend: Backend,
    /// Each call's deadline.
    pub timeout: Duration,
    /// Tools the operator vouches only read, whatever the backend's
    /// annotations say: served marked `readOnlyHint: true` (to agents and
    /// policies alike), so a policy may look them up and the sanitiser
    /// reads a name after them as prose. Only the backend or the operator
    /// can say a tool only reads, never a policy.
    pub read_only: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_urls_secrets_are_hidden_from_every_message() {
        let url = |u: &str| Backend::Url { url: u.to_owned(), token: None, headers: Vec::new() };
        let keyed = url("https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment");
        // As written, as reqwest writes it (normalised), and in pieces.
        for said in [
            "error sending request for url (https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment)",
            "url: \"https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment\"",
            "the query api_key=K3Y-123 was refused; password pa55word",
        ] {
            let hidden = keyed.hide(said);
            for secret in ["K3Y-123", "pa55word", "frag-ment"] {
                assert!(!hidden.contains(secret), "{said} → {hidden}");
            }
        }
        assert!(
            keyed
                .hide("for url (https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment)")
                .contains("https://mcp.example.com/mcp")
        );
        // Nothing to hide: the message as it is.
        let plain = url("http://127.0.0.1:8080/mcp");
        assert_eq!(
            plain.hide("connection refused: http://127.0.0.1:8080/mcp"),
            "connection refused: http://127.0.0.1:8080/mcp"
        );
        assert_eq!(Backend::Command(vec!["x".into()]).hide("a?b"), "a?b");
        assert!(url_holds_secrets("https://h/mcp?k=v") && url_holds_secrets("https://u:p@h/mcp"));
        assert!(!url_holds_secrets("https://h/mcp") && !url_holds_secrets("https://user@h/mcp"));
        assert!(url_holds_secrets("not a url?key=v"));
    }
}
