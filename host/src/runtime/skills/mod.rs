//! Skills (the `io.modelcontextprotocol/skills` extension, final 2026-09-13): directories of
//! instructions for an agent, a `SKILL.md` and its supporting files, served as resources with
//! digests the host computes. From the operator's directories (`[[skills]]`, read again when
//! they change) and from plugins that ship skills; nothing here runs anything.
//!
//! - `frontmatter`: a `SKILL.md`'s YAML frontmatter as JSON, and the naming rules;
//! - `scan`: an operator's directory read into skills, bounded;
//! - `held`: the skills a plugin ships, given at load;
//! - `library`: the skills served now, their files and directories, reads;
//! - `live`: the library kept current.

mod frontmatter;
mod held;
mod library;
mod live;
mod scan;

pub(crate) use held::held_skills;
pub(crate) use library::{DIRECTORY_MIME_TYPE, Found, Skill, SkillFile, SkillLibrary};
pub use live::LiveSkills;
pub use scan::SkillSource;
pub(crate) use scan::valid_path_segment;
