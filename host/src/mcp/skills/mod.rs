//! The skills extension on the wire (extensions/skills, `io.modelcontextprotocol/skills`):
//! `skills/list` (paginated, with the 2026-07-28 caching hints), `skills/get`,
//! `resources/directory/read` (`directoryRead: true`), `resources/read` and `resources/list`
//! of `skill://` files, the capability, and the lines of the server's `instructions` that
//! point at skills. What is served comes from `runtime::skills` (digests computed there);
//! with `[auth]`, a skill or file is visible to a principal its entitlements name (by URI,
//! as resources are).
//!
//! The rule of this room: skills are files served as they were read (from an operator's
//! directories, or shipped by a plugin and read when it loaded); no plugin runs for them, so no
//! call and its steps are taken (a room of one file, so that the folder names answer "where
//! are skills?").

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, GetSkillRequestParams, GetSkillResult, ListResourcesResult, ListSkillsResult, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceResult, SKILLS_EXTENSION_ID, ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::session::Session;
use crate::access::{Item, Kind, Verdict};
use crate::mcp::wire::era::Era;
use crate::mcp::wire::errors::refused;
use crate::mcp::wire::paging::page;
use crate::runtime::engine::bindings::{resources, types};
use crate::runtime::skills::{DIRECTORY_MIME_TYPE, Skill, SkillFile, SkillLibrary};

/// How long 2026-07-28 clients may keep a listing or entry: the files are read again on
/// change, so a minute bounds how stale a host's view is.
const SKILLS_TTL_MS: u64 = 60_000;
/// The scheme the host serves skills under; plugins' resources never take it.
pub(crate) const SKILL_SCHEME: &str = "skill://";
/// How many skills the server's instructions point at by name.
const INSTRUCTION_SKILLS: usize = 32;

/// Declares the extension (with `directoryRead`) and the `resources` capability it needs,
/// when skills are configured.
pub(crate) fn declare(capabilities: &mut ServerCapabilities, configured: bool) {
    if !configured {
        return;
    }
    let mut value = serde_json::to_value(&*capabilities).unwrap_or_default();
    value["extensions"][SKILLS_EXTENSION_ID] = json!({ "directoryRead": true });
    if value.get("resources").is_none_or(Value::is_null) {
        value["resources"] = json!({});
    }
    if let Ok(declared) = serde_json::from_value(value) {
        *capabilities = declared;
    }
}

/// The lines of the server's instructions that point at the skills served (extensions/skills
/// §Pointer from Server Instructions); `None` without skills.
pub(crate) fn instructions(library: &SkillLibrary) -> Option<String> {
    if library.is_empty() {
        return None;
    }
    let mut text =
        String::from("Skills this server serves (load one with skills/get and read its files with resources/read):");
    for skill in library.skills().take(INSTRUCTION_SKILLS) {
        let description = skill.frontmatter.get("description").and_then(Value::as_str).unwrap_or_default();
        let description: String = description.chars().filter(|c| !c.is_control()).take(200).collect();
        text.push_str(&format!("\n- {}: {description}", skill.uri));
    }
    let more = library.skills().count().saturating_sub(INSTRUCTION_SKILLS);
    if more > 0 {
        text.push_str(&format!("\n- and {more} more (skills/list)"));
    }
    Some(text)
}

/// A skill's entry as the wire carries it.
fn entry(library: &SkillLibrary, skill: &Skill) -> Value {
    let resources: Vec<Value> = skill
        .files
        .iter()
        .filter_map(|uri| library.file(uri))
        .map(|file| json!({ "uri": file.uri, "digest": file.digest, "size": file.size }))
        .collect();
    json!({ "uri": skill.uri, "frontmatter": skill.frontmatter, "resources": resources })
}

/// A file's `Resource` in a listing.
pub(crate) fn file_resource(file: &SkillFile) -> resources::Resource {
    resources::Resource {
        uri: file.uri.clone(),
        name: file.name.clone(),
        title: None,
        description: file.description.clone(),
        mime_type: Some(file.mime_type.to_owned()),
        size: Some(file.size),
        annotations: None,
    }
}

fn encode<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(format!("cannot encode {what}: {e}"), None))
}

fn unknown_skill(uri: &str) -> McpError {
    McpError::invalid_params(format!("no skill is served at {uri}"), Some(json!({ "uri": uri })))
}

impl Session {
    /// Whether the request's principal may see `uri` (always without `[auth]`).
    fn may_see(&self, context: &RequestContext<RoleServer>, uri: &str) -> bool {
        match self.list_filter(context) {
            None => true,
            Some((principal, access)) => {
                access.lists(&principal, Item { kind: Kind::Resource, name: uri, plugin: None })
            }
        }
    }

    /// Refuses `uri` to a principal whose entitlements do not name it; the error as for an
    /// unknown skill or resource when it may not even know it.
    fn admit_skill(&self, context: &RequestContext<RoleServer>, uri: &str, unknown: McpError) -> Result<(), McpError> {
        let (Some(access), Some(principal)) = (&self.state.access, self.principal(context)) else {
            return Ok(());
        };
        let item = Item { kind: Kind::Resource, name: uri, plugin: None };
        match access.verdict(&principal, item) {
            Verdict::Allowed => Ok(()),
            Verdict::Refused { scope } => Err(refused(item, scope.as_deref())),
            Verdict::Hidden => Err(unknown),
        }
    }

    /// `skills/list`.
    pub(crate) fn skills_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let library = self.state.skills.current();
        let visible: Vec<&Skill> = library.skills().filter(|skill| self.may_see(context, &skill.uri)).collect();
        let (skills, next) = page(&visible, |skill| &skill.uri, &request, self.state.page_size)?;
        let entries: Vec<Value> = skills.iter().map(|skill| entry(&library, skill)).collect();
        let mut result: ListSkillsResult = encode("skills", json!({ "skills": entries, "resultType": "complete" }))?;
        result.next_cursor = next;
        if Era::of(context).is_modern() {
            let scope = if self.list_filter(context).is_some() { CacheScope::Private } else { CacheScope::Public };
            result = result.with_ttl_ms(SKILLS_TTL_MS).with_cache_scope(scope);
        }
        Ok(result)
    }

    /// `skills/get`: -32602 for a URI that is not a served skill's `SKILL.md` (§Getting a Skill).
    pub(crate) fn skill_entry(
        &self,
        request: GetSkillRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let library = self.state.skills.current();
        let skill = library.skill(&request.uri).ok_or_else(|| unknown_skill(&request.uri))?;
        self.admit_skill(context, &skill.uri, unknown_skill(&request.uri))?;
        let mut result: GetSkillResult =
            encode("a skill", json!({ "skill": entry(&library, skill), "resultType": "complete" }))?;
        if Era::of(context).is_modern() {
            let scope = if self.list_filter(context).is_some() { CacheScope::Private } else { CacheScope::Public };
            result.ttl_ms = Some(SKILLS_TTL_MS);
            result.cache_scope = Some(scope);
        }
        Ok(result)
    }

    /// `resources/directory/read`: the direct children of a skill directory, paginated;
    /// -32602 for anything else (§Reading Directories).
    pub(crate) fn directory_page(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let library = self.state.skills.current();
        let not_a_directory = || {
            McpError::invalid_params(
                format!("{} is not a directory resource", request.uri),
                Some(json!({ "uri": request.uri })),
            )
        };
        let children = library.directory(&request.uri).ok_or_else(not_a_directory)?;
        self.admit_skill(context, &request.uri, not_a_directory())?;
        let children: Vec<(&str, bool)> = children.into_iter().filter(|(uri, _)| self.may_see(context, uri)).collect();
        let params = request.cursor.map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let (children, next) = page(&children, |(uri, _)| uri, &params, self.state.page_size)?;
        let listed: Vec<Value> = children
            .iter()
            .map(|(uri, is_directory)| match library.file(uri) {
                Some(file) if !is_directory => crate::mcp::wire::convert::resource(&file_resource(file), None)
                    .and_then(|r| serde_json::to_value(r).map_err(|e| McpError::internal_error(e.to_string(), None))),
                _ => Ok(json!({
                    "uri": uri,
                    "name": uri.rsplit('/').next().unwrap_or(uri),
                    "mimeType": DIRECTORY_MIME_TYPE,
                })),
            })
            .collect::<Result<_, _>>()?;
        let mut result: ListResourcesResult =
            encode("a directory", json!({ "resources": listed, "resultType": "complete" }))?;
        result.next_cursor = next;
        Ok(result)
    }

    /// `resources/read` of a `skill://` URI: the file as it is now, from the library only
    /// (plugins never answer for the scheme). A file that changed since the last scan is
    /// served as it is now, and the library is read again, so its entry follows.
    pub(crate) fn read_skill_file(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, McpError> {
        let library = self.state.skills.current();
        let not_found = || McpError::resource_not_found(format!("no resource at {uri}"), Some(json!({ "uri": uri })));
        let read = library.read(uri).ok_or_else(not_found)?;
        self.admit_skill(context, uri, not_found())?;
        let read = read.map_err(|e| McpError::internal_error(format!("cannot read {uri}: {e}"), None))?;
        if read.stale {
            tracing::info!(uri, "a skill file changed since it was read: reading the skill directories again");
            let skills = Arc::clone(&self.state.skills);
            tokio::task::spawn_blocking(move || skills.rescan());
        }
        let body = match String::from_utf8(read.bytes) {
            Ok(text) => types::ResourceBody::Text(text),
            Err(bytes) => types::ResourceBody::Blob(bytes.into_bytes()),
        };
        let contents =
            types::ResourceContents { uri: uri.to_owned(), mime_type: Some(read.mime_type.to_owned()), body };
        crate::mcp::wire::convert::read_result(&[contents])
    }

    /// The skill files a `resources/list` adds, those the principal may see.
    pub(crate) fn listed_skill_files(&self, context: &RequestContext<RoleServer>) -> Vec<resources::Resource> {
        let library = self.state.skills.current();
        library.files().filter(|file| self.may_see(context, &file.uri)).map(|file| file_resource(file)).collect()
    }
}
