//! A `SKILL.md`'s YAML frontmatter as the JSON object a skill entry carries (extensions/skills
//! §Frontmatter: "rendered verbatim as a JSON object"), and the Agent Skills naming rules.
//!
//! The YAML is read event by event into JSON, never into a tree with aliases expanded: an
//! alias is refused (a few hundred bytes of nested aliases expand to gigabytes), and so is
//! nesting past [`MAX_DEPTH`] or a frontmatter over [`MAX_FRONTMATTER_BYTES`].

use serde_json::{Map, Value};
use yaml_rust2::Yaml;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// The largest frontmatter read: the Agent Skills specification keeps `description` under
/// 1,024 characters, so 64 KiB holds every real one many times over.
pub(crate) const MAX_FRONTMATTER_BYTES: usize = 64 << 10;
/// How deeply mappings and sequences may nest.
const MAX_DEPTH: usize = 32;

/// The frontmatter of `text` (a `SKILL.md`), as a JSON object with a non-empty string `name`
/// and `description`; the error says what is wrong, for the operator's log.
pub(crate) fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let block = block(text).ok_or("SKILL.md does not begin with a `---` delimited YAML frontmatter block")?;
    if block.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!("the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"));
    }
    let value = yaml_to_json(block)?;
    let Value::Object(object) = value else {
        return Err("the frontmatter is not a YAML mapping".to_owned());
    };
    for field in ["name", "description"] {
        if object.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!("the frontmatter has no non-empty string `{field}`"));
        }
    }
    Ok(object)
}

/// The YAML between the leading `---` line and the next `---` line (a byte order mark and
/// CRLF line ends allowed), as the conformance suite and the reference hosts find it.
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\r\n").or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.starts_with("---") && bare[3..].chars().all(|c| c == ' ' || c == '\t') {
            return Some(rest[..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters of lowercase
/// letters, digits and hyphens, no hyphen at either end or twice in a row.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// One YAML document as JSON.
fn yaml_to_json(text: &str) -> Result<Value, String> {
    let mut builder = Builder::default();
    Parser::new_from_str(text).load(&mut builder, false).map_err(|e| format!("the frontmatter is not YAML: {e}"))?;
    if let Some(problem) = builder.problem {
        return Err(problem);
    }
    Ok(builder.done.unwrap_or(Value::Null))
}

/// A mapping or sequence being filled.
enum Open {
    Sequence(Vec<Value>),
    Mapping(Map<String, Value>, Option<String>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    done: Option<Value>,
    problem: Option<String>,
}

impl Builder {
    fn put(&mut self, value: Value) {
        let Some(top) = self.stack.last_mut() else {
            self.done = Some(value);
            return;
        };
        match top {
            Open::Sequence(items) => items.push(value),
            Open::Mapping(object, key) => match key.take() {
                Some(name) => {
                    object.insert(name, value);
                }
                None => match value {
                    Value::String(text) => *key = Some(text),
                    // JSON keys are text: a number, boolean or null key becomes its text, as
                    // JSON renderers of YAML do.
                    Value::Number(_) | Value::Bool(_) | Value::Null => *key = Some(value.to_string()),
                    _ => self.problem = Some("a mapping key is not a scalar".to_owned()),
                },
            },
        }
    }

    fn open(&mut self, open: Open) {
        if self.stack.len() >= MAX_DEPTH {
            self.problem.get_or_insert_with(|| format!("the frontmatter nests deeper than {MAX_DEPTH} levels"));
            return;
        }
        self.stack.push(open);
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, _mark: Marker) {
        if self.problem.is_some() {
            return;
        }
        match event {
            Event::Alias(_) => self.problem = Some("the frontmatter uses a YAML alias (refused)".to_owned()),
            Event::Scalar(text, style, _, tag) => {
                let value = scalar(text, style, tag.as_ref());
                self.put(value);
            }
            Event::SequenceStart(..) => self.open(Open::Sequence(Vec::new())),
            Event::MappingStart(..) => self.open(Open::Mapping(Map::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => {
                let value = match self.stack.pop() {
                    Some(Open::Sequence(items)) => Value::Array(items),
                    Some(Open::Mapping(object, _)) => Value::Object(object),
                    None => return,
                };
                self.put(value);
            }
            _ => {}
        }
    }
}

/// A scalar as JSON: quoted or `!!str`-tagged ones are text; plain ones typed by YAML 1.2's
/// core schema (null, booleans, integers, floats).
fn scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let tagged_text = tag.is_some_and(|tag| tag.suffix == "str");
    if style != TScalarStyle::Plain || tagged_text {
        return Value::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(real) => match real.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            Some(number) => Value::Number(number),
            None => Value::String(real),
        },
        _ => Value::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frontmatter_becomes_its_json_object() {
        let text = "---\nname: pdf-processing\ndescription: \"Extract: fill\"\nlicense: Apache-2.0\nmetadata:\n  version: 2\n  tags: [a, 'b']\n  ok: true\n  none: ~\n---\n# Body\n";
        let object = frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(object),
            serde_json::json!({ "name": "pdf-processing", "description": "Extract: fill", "license": "Apache-2.0",
                "metadata": { "version": 2, "tags": ["a", "b"], "ok": true, "none": null } })
        );
        assert!(frontmatter("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\n").is_ok());
    }

    #[test]
    fn bad_frontmatter_is_named() {
        assert!(frontmatter("# no frontmatter\n").unwrap_err().contains("does not begin"));
        assert!(frontmatter("---\nname: a\n").unwrap_err().contains("does not begin"));
        assert!(frontmatter("---\nname: a\n---\n").unwrap_err().contains("`description`"));
        assert!(frontmatter("---\n- a\n---\n").unwrap_err().contains("not a YAML mapping"));
        assert!(frontmatter("---\nname: [a\n---\n").unwrap_err().contains("not YAML"));
        let bomb = "---\nname: a\ndescription: b\nx: &x [1, 1]\ny: [*x, *x]\n---\n";
        assert!(frontmatter(bomb).unwrap_err().contains("alias"));
        let deep = format!("---\nname: a\ndescription: b\nx: {}{}\n---\n", "[".repeat(40), "]".repeat(40));
        assert!(frontmatter(&deep).unwrap_err().contains("deeper"));
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["pdf-processing", "a", "x9", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "Pdf", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
