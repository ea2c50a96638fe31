//! The two eras of MCP, and everything that differs between them for one request, decided in
//! one place: legacy sessions (2024-11-05 to 2025-11-25, `initialize` first) and stateless
//! 2026-07-28 requests (the version in each request's `_meta`).
//!
//! | | legacy | 2026-07-28 |
//! |---|---|---|
//! | client roots | asked once per session (`roots/list`) | a multi round-trip question |
//! | sampling, elicitation | server-to-client requests | multi round-trip questions |
//! | log level | `logging/setLevel`, else info | the request's `_meta` only |
//! | list results | plain | with caching hints (SEP-2549) |
//! | content | by version ([`Dialect`]) | everything |

#![expect(deprecated, reason = "logging stays served to the clients that use it")]

use rmcp::model::{LoggingLevel, ProtocolVersion};
use rmcp::service::{RequestContext, RoleServer};

/// Which content an older client understands: `audio` came with 2025-03-26,
/// `resource_link` and structured content with 2025-06-18.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    pub(crate) audio: bool,
    pub(crate) resource_links: bool,
    /// `structuredContent` may be any JSON value (2026-07-28); before, only an object.
    pub(crate) any_structured_content: bool,
}

impl Dialect {
    fn for_version(version: Option<&str>) -> Dialect {
        let version = version.unwrap_or("2025-06-18");
        Dialect {
            audio: version >= "2025-03-26",
            resource_links: version >= "2025-06-18",
            any_structured_content: version >= "2026-07-28",
        }
    }
}

/// The era of one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Era {
    modern: bool,
    dialect: Dialect,
}

impl Era {
    /// The era of the request `context` belongs to.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Era {
        let version = context.protocol_version();
        let version = version.as_ref().map(|v| v.as_str());
        Era {
            modern: version.is_some_and(|v| v >= ProtocolVersion::V_2026_07_28.as_str()),
            dialect: Dialect::for_version(version),
        }
    }

    /// Stateless 2026-07-28.
    pub(crate) fn is_modern(self) -> bool {
        self.modern
    }

    /// The content the client understands.
    pub(crate) fn dialect(self) -> Dialect {
        self.dialect
    }

    /// The level at or above which guest logs reach this request's client, if any: a
    /// 2026-07-28 request's own (logging §Per-request log level), else the session's
    /// `logging/setLevel`, else info.
    pub(crate) fn log_level(
        self,
        context: &RequestContext<RoleServer>,
        session: Option<LoggingLevel>,
    ) -> Option<LoggingLevel> {
        if self.modern { context.meta.log_level() } else { Some(session.unwrap_or(LoggingLevel::Info)) }
    }
}
