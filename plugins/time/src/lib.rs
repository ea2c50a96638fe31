//! `time`: a drop-in replacement for the reference server `mcp-server-time` (2026.10.x): the
//! tools `get_current_time` and `convert_time`, with the same arguments, results and errors.
//! The IANA time zone database is compiled in (chrono-tz), so the sandbox needs no files. The
//! local time zone, which the reference detects from the host, is the plugin's `LOCAL_TIMEZONE`
//! environment variable (`[plugin.time] env`), UTC without it: a sandbox sees no host clock
//! settings.

use chrono::{DateTime, NaiveTime, Offset, TimeZone, Utc};
use chrono_tz::{OffsetComponents, Tz};
use mcpbox_sdk::prelude::*;
use serde_json::Value;

/// The reference's schemas, exactly: tools/list must match for agents written against it.
const TOOLS: &str = include_str!("../tools.json");

#[derive(Deserialize)]
struct CurrentTime {
    timezone: String,
}

#[derive(Deserialize)]
struct ConvertTime {
    source_timezone: String,
    time: String,
    target_timezone: String,
}

/// One instant in one zone, as the reference's `TimeResult`.
fn time_result(zone_name: &str, at: &DateTime<Tz>) -> Value {
    let dst = !at.offset().dst_offset().is_zero();
    json!({
        "timezone": zone_name,
        "datetime": at.format("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        "day_of_week": at.format("%A").to_string(),
        "is_dst": dst,
    })
}

/// An exact IANA key, or the reference's error (Python's `ZoneInfoNotFoundError`, quoted as
/// its `str` quotes it).
fn zone(name: &str) -> Result<Tz, Error> {
    name.parse::<Tz>()
        .ok()
        .filter(|tz| tz.name() == name)
        .ok_or_else(|| Error::failed(format!("Invalid timezone: 'No time zone found with key {name}'")))
}

fn require(name: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() { Err(Error::failed(format!("Missing required argument: {name}"))) } else { Ok(()) }
}

/// `HH:MM` as Python's `strptime("%H:%M")` reads it: one or two digits each.
fn parse_hh_mm(text: &str) -> Option<NaiveTime> {
    let (hours, minutes) = text.split_once(':')?;
    let field = |part: &str| {
        (!part.is_empty() && part.len() <= 2 && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u32>().ok())?
    };
    NaiveTime::from_hms_opt(field(hours)?, field(minutes)?, 0)
}

/// The offset difference as the reference writes it: `+9.0h`, `-4.0h`, `+5.75h`, `+5.5h`.
fn hours_difference(seconds: i32) -> String {
    let hours = f64::from(seconds) / 3600.0;
    if hours.fract() == 0.0 {
        format!("{hours:+.1}h")
    } else {
        let text = format!("{hours:+.2}");
        format!("{}h", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

fn structured(value: Value) -> CallResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    CallResult { structured_content: Some(value.to_string()), ..CallResult::text(text) }
}

fn get_current_time(args: Value) -> Result<CallResult, Error> {
    let args: CurrentTime = serde_json::from_value(args)?;
    require("timezone", &args.timezone)?;
    let tz = zone(&args.timezone)?;
    Ok(structured(time_result(&args.timezone, &Utc::now().with_timezone(&tz))))
}

fn convert_time(args: Value) -> Result<CallResult, Error> {
    let args: ConvertTime = serde_json::from_value(args)?;
    require("source_timezone", &args.source_timezone)?;
    require("target_timezone", &args.target_timezone)?;
    let source_tz = zone(&args.source_timezone)?;
    let target_tz = zone(&args.target_timezone)?;
    let time =
        parse_hh_mm(&args.time).ok_or_else(|| Error::failed("Invalid time format. Expected HH:MM [24-hour format]"))?;
    let today = Utc::now().with_timezone(&source_tz).date_naive();
    // A wall-clock time skipped by a clock change does not exist; one that occurs twice is
    // its first occurrence (Python's fold=0), as in the reference.
    let source = source_tz.from_local_datetime(&today.and_time(time)).earliest().ok_or_else(|| {
        Error::failed(format!(
            "Invalid time: {} does not exist in {} on {today} (skipped by a clock change)",
            args.time, args.source_timezone
        ))
    })?;
    let target = source.with_timezone(&target_tz);
    let difference = target.offset().fix().local_minus_utc() - source.offset().fix().local_minus_utc();
    Ok(structured(json!({
        "source": time_result(&args.source_timezone, &source),
        "target": time_result(&args.target_timezone, &target),
        "time_difference": hours_difference(difference),
    })))
}

/// The local zone named in the descriptions, as the reference names the host's.
fn local_zone() -> String {
    std::env::var("LOCAL_TIMEZONE").ok().filter(|name| zone(name).is_ok()).unwrap_or_else(|| "Etc/UTC".to_owned())
}

/// A failure as the reference reports it: a result with `isError` and the Python SDK's words,
/// not mcpbox's `plugin ... failed` prefix, so the model reads what it reads there.
fn reported(
    tool: &'static str,
    run: fn(Value) -> Result<CallResult, Error>,
) -> impl Fn(Value) -> Result<CallResult, Error> {
    move |args| {
        Ok(run(args).unwrap_or_else(|e| CallResult::error(format!("Error executing tool {tool}: {}", e.message()))))
    }
}

/// The reference's tool list, naming the local zone as it does.
fn listing() -> String {
    TOOLS.replace("{LOCAL_TZ}", &local_zone())
}

fn plugin() -> Plugin {
    Plugin::new()
        .tool(Tool::new("get_current_time", "", reported("get_current_time", get_current_time)).listed_in(listing))
        .tool(Tool::new("convert_time", "", reported("convert_time", convert_time)).listed_in(listing))
}

mcpbox_sdk::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_read_like_the_reference() {
        assert_eq!(hours_difference(9 * 3600), "+9.0h");
        assert_eq!(hours_difference(-4 * 3600), "-4.0h");
        assert_eq!(hours_difference(0), "+0.0h");
        assert_eq!(hours_difference(5 * 3600 + 45 * 60), "+5.75h");
        assert_eq!(hours_difference(-(3 * 3600 + 1800)), "-3.5h");
    }

    #[test]
    fn times_parse_like_strptime() {
        assert_eq!(parse_hh_mm("9:05"), NaiveTime::from_hms_opt(9, 5, 0));
        assert_eq!(parse_hh_mm("23:59"), NaiveTime::from_hms_opt(23, 59, 0));
        for bad in ["24:00", "12:60", "12", "12:00:00", "1:2:3", "ab:cd", "123:00", ""] {
            assert_eq!(parse_hh_mm(bad), None, "{bad}");
        }
    }
}
