//! `[[auth.entitlements]]` and `[auth.limits]`: what an authenticated principal may use, and
//! its share of the server. Checked here (each mistake named with the file, line and key),
//! applied by `access/`.

use std::num::NonZeroU32;

use anyhow::{Result, anyhow};

use super::file::{ConfigFile, FileAuthLimits, FileEntitlement};

/// The most calls per minute or burst a principal may be given: beyond it the limit limits
/// nothing, and the arithmetic stays far from overflow.
const MAX_RATE: u64 = 1_000_000;

/// Who an entitlement is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grantee {
    /// Principals whose token grants this scope.
    Scope(String),
    /// Principals whose token's claim `name` is `value` (or a list holding it).
    Claim { name: String, value: String },
}

/// One `[[auth.entitlements]]`: a grantee and what it may use. Patterns are exact names or end
/// in `*` (any rest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entitlement {
    pub grantee: Grantee,
    pub plugins: Vec<String>,
    pub tools: Vec<String>,
    pub prompts: Vec<String>,
    pub resources: Vec<String>,
    /// Principals without it are not told what it covers exists.
    pub hidden: bool,
}

/// Each principal's share of the server; `None`: unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrincipalLimits {
    /// Calls running at once.
    pub concurrent_calls: Option<NonZeroU32>,
    /// Calls started per minute on average, and at once after a quiet spell.
    pub rate: Option<Rate>,
}

/// A token bucket: `burst` calls at once, refilled at `per_minute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_minute: NonZeroU32,
    pub burst: NonZeroU32,
}

/// The file's entitlements, in its order (a challenge names the first one that would allow a
/// refused request).
pub(super) fn entitlements(file: &ConfigFile) -> Result<Vec<Entitlement>> {
    file.config.auth.entitlements.iter().map(|spanned| entitlement(file, spanned.span(), spanned.get_ref())).collect()
}

fn entitlement(file: &ConfigFile, span: std::ops::Range<usize>, entry: &FileEntitlement) -> Result<Entitlement> {
    let at = |key: &str| format!("{}: [[auth.entitlements]] {key}", file.at(span.clone()));
    let grantee = match (&entry.scope, &entry.claim, &entry.value) {
        (Some(scope), None, None) if !scope.is_empty() && !scope.contains(char::is_whitespace) => {
            Grantee::Scope(scope.clone())
        }
        (Some(scope), None, None) => {
            return Err(anyhow!("{} `{scope}` must be one scope: not empty, no spaces", at("scope")));
        }
        (None, Some(name), Some(value)) if !name.is_empty() => {
            Grantee::Claim { name: name.clone(), value: value.clone() }
        }
        (None, Some(_), None) => return Err(anyhow!("{} needs `value`, the value the claim must have", at("claim"))),
        _ => {
            return Err(anyhow!(
                "{} needs either `scope`, or `claim` and `value`: who the entitlement is for",
                at("scope")
            ));
        }
    };
    for (key, patterns) in [
        ("plugins", &entry.plugins),
        ("tools", &entry.tools),
        ("prompts", &entry.prompts),
        ("resources", &entry.resources),
    ] {
        if let Some(bad) = patterns.iter().find(|p| p.is_empty() || p.trim_end_matches('*').contains('*')) {
            return Err(anyhow!("{} `{bad}`: a name, or a name's start followed by one `*` at the end", at(key)));
        }
    }
    let grants_nothing =
        entry.plugins.is_empty() && entry.tools.is_empty() && entry.prompts.is_empty() && entry.resources.is_empty();
    if grants_nothing {
        return Err(anyhow!("{} grants nothing: name plugins, tools, prompts or resources", at("plugins")));
    }
    Ok(Entitlement {
        grantee,
        plugins: entry.plugins.clone(),
        tools: entry.tools.clone(),
        prompts: entry.prompts.clone(),
        resources: entry.resources.clone(),
        hidden: entry.hidden,
    })
}

/// The file's `[auth.limits]`.
pub(super) fn limits(file: &ConfigFile) -> Result<PrincipalLimits> {
    let FileAuthLimits { concurrent_calls, calls_per_minute, burst } = &file.config.auth.limits;
    let positive = |value: &toml::Spanned<u64>, key: &str| -> Result<NonZeroU32> {
        let number = *value.get_ref();
        match NonZeroU32::new(u32::try_from(number.min(MAX_RATE)).unwrap_or(u32::MAX)) {
            Some(n) if number <= MAX_RATE => Ok(n),
            _ => Err(anyhow!(
                "{}: [auth.limits] {key} must be between 1 and {MAX_RATE}, not {number} (leave it out for no limit)",
                file.at(value.span())
            )),
        }
    };
    let concurrent_calls = concurrent_calls.as_ref().map(|v| positive(v, "concurrent_calls")).transpose()?;
    let rate = match (calls_per_minute, burst) {
        (Some(per_minute), burst) => {
            let per_minute = positive(per_minute, "calls_per_minute")?;
            let burst = burst.as_ref().map(|b| positive(b, "burst")).transpose()?.unwrap_or(per_minute);
            Some(Rate { per_minute, burst })
        }
        (None, Some(burst)) => {
            return Err(anyhow!(
                "{}: [auth.limits] burst goes with calls_per_minute, the rate it refills at",
                file.at(burst.span())
            ));
        }
        (None, None) => None,
    };
    Ok(PrincipalLimits { concurrent_calls, rate })
}
