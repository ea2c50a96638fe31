//! `fetch`: a drop-in replacement for the reference server `mcp-server-fetch` (2026.10.x): the
//! tool `fetch` (a URL as Markdown, or raw; `max_length`, `start_index`) and the prompt
//! `fetch`, with the reference's results and errors. Requests go through `wasi:http`, so the
//! host's network grant decides where: `network = ["*"]` reaches any public host and never a
//! loopback, private or link-local address (unless `allow_private_network`), every redirect
//! hop checked again. robots.txt is honoured as the reference honours it, for the page and
//! every redirect target, unless the operator sets `IGNORE_ROBOTS_TXT=true` in the plugin's
//! environment (the reference's `--ignore-robots-txt`); `USER_AGENT` replaces the user agent
//! (its `--user-agent`).
//!
//! The Markdown is the reference's as it runs without Node.js: readabilipy's Python simplifier
//! (`simplify`) then markdownify (`markdown`). With Node.js on its `PATH` the reference uses
//! Mozilla's Readability.js instead, which this plugin does not reproduce.
//!
//! Modules: `http` (requests, redirects), `robots`, `dom` (the HTML parser), `simplify`,
//! `markdown`.

mod dom;
mod http;
mod markdown;
mod robots;
mod simplify;

use mcpbox_sdk::prelude::*;
use serde_json::Value;
use url::Url;

const TOOLS: &str = include_str!("../tools.json");
const AUTONOMOUS: &str = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)";
const MANUAL: &str = "ModelContextProtocol/1.0 (User-Specified; +https://github.com/modelcontextprotocol/servers)";
const FAILED_TO_SIMPLIFY: &str = "<error>Page failed to be simplified from HTML</error>";

fn user_agent(default: &str) -> String {
    std::env::var("USER_AGENT").ok().filter(|ua| !ua.is_empty()).unwrap_or_else(|| default.to_owned())
}

fn check_robots() -> bool {
    !std::env::var("IGNORE_ROBOTS_TXT").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The page as Markdown, or the reference's failure marker.
pub(crate) fn extract_content_from_html(html: &str) -> String {
    let article = simplify::simplify(html);
    let content = markdown::markdownify(&article);
    if content.trim().is_empty() { FAILED_TO_SIMPLIFY.to_owned() } else { content }
}

fn robots_url(url: &Url) -> Url {
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    robots
}

/// A request mcpbox refused, in words that say which grant is missing (the reference's own
/// refusal names its `--allow-private-ips`; here the operator's config decides).
fn refusal(url: &Url, failure: &http::Failure) -> Option<Error> {
    let host = url.host_str().unwrap_or_default();
    if failure.0.contains("DestinationIpProhibited") {
        return Some(Error::failed(format!(
            "Refused to fetch {url}: {host} resolves to an address that is not public. The operator can allow private, \
             loopback and link-local addresses with `allow_private_network = true` in [plugin.fetch]."
        )));
    }
    failure.0.contains("HttpRequestDenied").then(|| {
        Error::failed(format!(
            "mcpbox did not let the fetch plugin reach {host}: its network grant does not include it. The operator \
             grants it with `network = [\"*\"]` (any public host) or a list of hosts in [plugin.fetch]."
        ))
    })
}

/// The reference's `check_may_autonomously_fetch_url`.
fn may_fetch(url: &Url, user_agent: &str) -> Result<(), Error> {
    let robots_url = robots_url(url);
    let mut no_check = |_: &Url| Ok(());
    let response = match http::get(&robots_url, user_agent, &mut no_check)? {
        Ok(response) => response,
        Err(failure) => {
            return Err(refusal(&robots_url, &failure).unwrap_or_else(|| {
                Error::failed(format!("Failed to fetch robots.txt {robots_url} due to a connection issue"))
            }));
        }
    };
    if matches!(response.status, 401 | 403) {
        return Err(Error::failed(format!(
            "When fetching robots.txt ({robots_url}), received status {} so assuming that autonomous fetching is not allowed, the user can try manually fetching by using the fetch prompt",
            response.status
        )));
    }
    if (400..500).contains(&response.status) {
        return Ok(());
    }
    let text = http::text(&response);
    let rules: Vec<&str> = text.lines().filter(|line| !line.trim().starts_with('#')).collect();
    let robots = robots::Robots::parse(&rules.join("\n"));
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    if !robots.can_fetch(&path, user_agent) {
        return Err(Error::failed(format!(
            "The sites robots.txt ({robots_url}), specifies that autonomous fetching of this page is not allowed, <useragent>{user_agent}</useragent>\n<url>{url}</url><robots>\n{text}\n</robots>\nThe assistant must let the user know that it failed to view the page. The assistant may provide further guidance based on the above information.\nThe assistant can tell the user that they can try manually fetching the page by using the fetch prompt within their UI."
        )));
    }
    Ok(())
}

/// The reference's `fetch_url`: the content and the prefix that says what it is.
fn fetch_url(url: &Url, user_agent: &str, force_raw: bool, robots: bool) -> Result<(String, String), Error> {
    let mut check_hop = |hop: &Url| if robots { may_fetch(hop, user_agent) } else { Ok(()) };
    let response = http::get(url, user_agent, &mut check_hop)?.map_err(|failure| {
        refusal(url, &failure).unwrap_or_else(|| Error::failed(format!("Failed to fetch {url}: {}", failure.0)))
    })?;
    if response.status >= 400 {
        return Err(Error::failed(format!("Failed to fetch {url} - status code {}", response.status)));
    }
    let page = http::text(&response);
    let head: String = page.chars().take(100).collect();
    let is_html =
        head.contains("<html") || response.content_type.contains("text/html") || response.content_type.is_empty();
    if is_html && !force_raw {
        return Ok((extract_content_from_html(&page), String::new()));
    }
    let prefix = format!(
        "Content type {} cannot be simplified to markdown, but here is the raw content:\n",
        response.content_type
    );
    Ok((page, prefix))
}

/// The arguments as the reference's pydantic model checks them (strict integers and booleans).
struct FetchArgs {
    url: Url,
    max_length: usize,
    start_index: usize,
    raw: bool,
}

fn fetch_args(args: &Value) -> Result<FetchArgs, String> {
    let url = args.get("url").and_then(Value::as_str).ok_or("url: Field required")?;
    let url = Url::parse(url).map_err(|e| format!("url: Input should be a valid URL, {e}"))?;
    let integer = |name: &str, default: u64, min: u64, max: u64| -> Result<usize, String> {
        match args.get(name) {
            None => Ok(default as usize),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if (min..=max).contains(&v) => Ok(v as usize),
                _ => Err(format!("{name}: Input should be an integer from {min} to {max}")),
            },
            Some(_) => Err(format!("{name}: Input should be a valid integer")),
        }
    };
    let raw = match args.get("raw") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("raw: Input should be a valid boolean".into()),
    };
    Ok(FetchArgs {
        url,
        max_length: integer("max_length", 5000, 1, 999_999)?,
        start_index: integer("start_index", 0, 0, u64::MAX)?,
        raw,
    })
}

/// `content[start_index : start_index + max_length]`, in characters, with the reference's
/// notes when nothing is left or more remains.
fn window(content: &str, start_index: usize, max_length: usize) -> String {
    let length = content.chars().count();
    if start_index >= length {
        return "<error>No more content available.</error>".to_owned();
    }
    let part: String = content.chars().skip(start_index).take(max_length).collect();
    let taken = part.chars().count();
    let remaining = length - (start_index + taken);
    if taken == max_length && remaining > 0 {
        let next = start_index + taken;
        return format!(
            "{part}\n\n<error>Content truncated. Call the fetch tool with a start_index of {next} to get more content.</error>"
        );
    }
    part
}

fn fetch(args: Value) -> Result<CallResult, Error> {
    let outcome = (|| -> Result<String, Error> {
        let args = fetch_args(&args).map_err(Error::invalid_arguments)?;
        let agent = user_agent(AUTONOMOUS);
        if check_robots() {
            may_fetch(&args.url, &agent)?;
        }
        let (content, prefix) = fetch_url(&args.url, &agent, args.raw, check_robots())?;
        Ok(format!("{prefix}Contents of {}:\n{}", args.url, window(&content, args.start_index, args.max_length)))
    })();
    Ok(match outcome {
        Ok(text) => CallResult::text(text),
        Err(e) => CallResult::error(format!("Error executing tool fetch: {}", e.message())),
    })
}

fn fetch_prompt(arguments: &mcpbox_sdk::PromptArgs) -> Result<PromptResult, Error> {
    let url = arguments.get("url").unwrap_or_default();
    let text = match Url::parse(url) {
        Ok(url) => match fetch_url(&url, &user_agent(MANUAL), false, false) {
            Ok((content, prefix)) => format!("{prefix}{content}"),
            Err(e) => e.message().to_owned(),
        },
        Err(e) => format!("Failed to fetch {url}: {e}"),
    };
    Ok(PromptResult::user(mcpbox_sdk::content::text(text)))
}

/// The reference's tool list (read only when the host lists the tools).
fn listing() -> String {
    TOOLS.to_owned()
}

fn plugin() -> Plugin {
    Plugin::new().tool(Tool::new("fetch", "", fetch).listed_in(listing)).prompt(
        Prompt::new("fetch", "Fetch a URL and extract its contents as markdown").argument("url", "URL to fetch", true),
        fetch_prompt,
    )
}

mcpbox_sdk::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_like_the_reference() {
        assert_eq!(
            window("abcdef", 0, 3),
            "abc\n\n<error>Content truncated. Call the fetch tool with a start_index of 3 to get more content.</error>"
        );
        assert_eq!(window("abcdef", 3, 3), "def");
        assert_eq!(window("abcdef", 6, 3), "<error>No more content available.</error>");
        assert_eq!(window("héllo", 1, 10), "éllo");
    }

    #[test]
    fn pages_become_markdown_like_the_reference() {
        let html = "<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body>\
            <nav>menu</nav><h1>Title <em>here</em></h1><p>One <a href='/x'>link</a> and snake_case *stars*.</p>\
            <ul><li>a<ul><li>b</li></ul></li><li>c</li></ul><ol start='3'><li>x</li><li>y</li></ol>\
            <p>line<br>same<br><br>next</p><script>evil()</script></body></html>";
        let markdown = extract_content_from_html(html);
        assert!(markdown.contains("# Title here"), "{markdown}");
        assert!(markdown.contains("One link and snake\\_case \\*stars\\*."), "{markdown}");
        assert!(markdown.contains("3. x\n4. y"), "{markdown}");
        assert!(!markdown.contains("menu") && !markdown.contains("evil"), "{markdown}");
    }
}
