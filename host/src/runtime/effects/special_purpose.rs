//! Which addresses are public, derived from the IANA IPv4 and IPv6 Special-Purpose Address
//! Registries (RFC 6890; snapshots with their source and date in `host/data/iana/`), not from
//! memory. An address is refused when the most specific registry block holding it is not
//! marked "Globally Reachable: True" (False, N/A, or blank for terminated blocks), and so are
//! multicast (its own registries, RFC 5771 and RFC 4291 §2.7) and, for IPv6, everything outside
//! the Global Unicast space 2000::/3 (RFC 4291 §2.4; the rest is unassigned or special).
//!
//! IPv6 addresses that carry an IPv4 address are decoded and the IPv4 address checked:
//! IPv4-mapped `::ffff:a.b.c.d` and the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052) reach
//! that IPv4 address, so they are as public as it is; ISATAP interface identifiers
//! (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`, RFC 5214) must embed a public one; 6to4
//! (`2002::/16`), Teredo (`2001::/32`), the NAT64 local-use prefix and IPv4-compatible
//! addresses are refused outright (the registry does not mark them reachable), and the message
//! names the IPv4 address they embed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

const IPV4_REGISTRY: &str = include_str!("../../../data/iana/iana-ipv4-special-registry-1.csv");
const IPV6_REGISTRY: &str = include_str!("../../../data/iana/iana-ipv6-special-registry-1.csv");

/// One block of a registry.
#[derive(Debug, Clone)]
struct Block {
    network: u128,
    prefix: u8,
    name: String,
    reachable: bool,
}

impl Block {
    fn contains(&self, address: u128, bits: u8) -> bool {
        let shift = u32::from(bits - self.prefix);
        self.prefix == 0 || address >> shift == self.network >> shift
    }
}

/// Both registries, parsed once.
struct Registries {
    v4: Vec<Block>,
    v6: Vec<Block>,
}

fn registries() -> &'static Registries {
    static PARSED: OnceLock<Registries> = OnceLock::new();
    PARSED.get_or_init(|| Registries { v4: parse(IPV4_REGISTRY), v6: parse(IPV6_REGISTRY) })
}

/// Records of IANA's CSV: fields separated by commas, quoted fields with `""` for a quote and
/// line breaks inside.
fn records(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => record.push(std::mem::take(&mut field)),
            ('\n', false) => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            ('\r', false) => {}
            (c, _) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// A cell without its footnote marks (`False [1]` → `False`).
fn without_footnotes(cell: &str) -> &str {
    cell.split(" [").next().unwrap_or(cell).trim()
}

/// The blocks of a registry; a row may list several blocks (`"192.0.0.170/32, 192.0.0.171/32"`).
/// The snapshot is checked by the tests, so a row that does not parse is a build defect; it is
/// left out here rather than taking the host down.
fn parse(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    for record in records(text).into_iter().skip(1) {
        let [cell, name, _, _, _, _, _, _, reachable, ..] = record.as_slice() else { continue };
        let reachable = without_footnotes(reachable) == "True";
        for block in without_footnotes(cell).split(", ") {
            let Some((address, prefix)) = block.split_once('/') else { continue };
            let (Ok(address), Ok(prefix)) = (address.trim().parse::<IpAddr>(), prefix.trim().parse::<u8>()) else {
                continue;
            };
            let network = match address {
                IpAddr::V4(v4) => u128::from(u32::from(v4)),
                IpAddr::V6(v6) => u128::from(v6),
            };
            blocks.push(Block { network, prefix, name: name.trim().to_owned(), reachable });
        }
    }
    blocks
}

/// The most specific block of `blocks` holding `address` (of `bits` bits).
fn most_specific(blocks: &[Block], address: u128, bits: u8) -> Option<&Block> {
    blocks.iter().filter(|b| b.prefix <= bits && b.contains(address, bits)).max_by_key(|b| b.prefix)
}

/// Why `ip` is not a public address, or `None` if it is.
pub(crate) fn refusal(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<String> {
    if ip.is_multicast() {
        return Some("multicast (RFC 5771)".to_owned());
    }
    let blocks = if crate::switched_off!("network.special-purpose-v4") { &[][..] } else { &registries().v4[..] };
    let block = most_specific(blocks, u128::from(u32::from(ip)), 32)?;
    (!block.reachable).then(|| format!("{} (IANA special-purpose, not globally reachable)", block.name))
}

/// The IPv4 address in the last 32 bits of `ip`.
fn low_v4(ip: Ipv6Addr) -> Ipv4Addr {
    let octets = ip.octets();
    Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15])
}

fn refusal_v6(ip: Ipv6Addr) -> Option<String> {
    let segments = ip.segments();
    // Forms that reach an IPv4 address: as public as it is.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refusal_v4(v4).map(|why| format!("IPv4-mapped {v4}: {why}"));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = low_v4(ip);
        return refusal_v4(v4).map(|why| format!("NAT64 of {v4}: {why}"));
    }
    if ip.is_multicast() {
        return Some("multicast (RFC 4291)".to_owned());
    }
    if segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(format!("IPv4-compatible (deprecated, RFC 4291) embedding {}", low_v4(ip)));
    }
    let bits = u128::from(ip);
    if let Some(block) = most_specific(&registries().v6, bits, 128) {
        if !block.reachable && !crate::switched_off!("network.special-purpose-v6") {
            let embedded = match segments[0] {
                0x2002 => format!(" embedding {}", Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32)),
                // Teredo's client address is the last 32 bits, inverted (RFC 4380 §4).
                0x2001 if segments[1] == 0 => format!(" embedding {}", Ipv4Addr::from(!(bits as u32))),
                _ => String::new(),
            };
            return Some(format!("{}{embedded} (IANA special-purpose, not globally reachable)", block.name));
        }
        return None;
    }
    if segments[0] & 0xe000 != 0x2000 {
        return Some("outside IPv6 global unicast space 2000::/3 (RFC 4291)".to_owned());
    }
    // ISATAP (RFC 5214 §6.1): the interface identifier embeds an IPv4 address.
    if (segments[4] & 0xfdff) == 0 && segments[5] == 0x5efe && !crate::switched_off!("network.isatap-decoded") {
        let v4 = low_v4(ip);
        return refusal_v4(v4).map(|why| format!("ISATAP embedding {v4}: {why}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first and last address of a block.
    fn ends(block: &Block, bits: u8) -> [u128; 2] {
        let span = if block.prefix == 0 { u128::MAX >> (128 - bits) } else { (1u128 << (bits - block.prefix)) - 1 };
        [block.network, block.network | span]
    }

    fn ip(bits: u8, value: u128) -> IpAddr {
        if bits == 32 { IpAddr::V4(Ipv4Addr::from(value as u32)) } else { IpAddr::V6(Ipv6Addr::from(value)) }
    }

    #[test]
    fn the_snapshot_parses_whole() {
        let registries = registries();
        // Every data row (the IPv4 registry lists two blocks in one row).
        assert_eq!(registries.v4.len(), 26, "{:#?}", registries.v4);
        assert_eq!(registries.v6.len(), 25, "{:#?}", registries.v6);
        assert!(registries.v4.iter().any(|b| b.name == "\"This network\"" && !b.reachable));
        assert!(registries.v6.iter().any(|b| b.name == "TEREDO" && !b.reachable), "N/A is not reachable");
    }

    #[test]
    fn every_block_not_globally_reachable_is_refused_at_both_ends() {
        for (blocks, bits) in [(&registries().v4, 32u8), (&registries().v6, 128u8)] {
            for block in blocks.iter().filter(|b| !b.reachable) {
                for value in ends(block, bits) {
                    // Inside a more specific reachable block, the more specific one decides.
                    if most_specific(blocks, value, bits).is_some_and(|b| b.reachable) {
                        continue;
                    }
                    let address = ip(bits, value);
                    assert!(refusal(address).is_some(), "{address} in {} must be refused", block.name);
                }
            }
        }
    }

    #[test]
    fn globally_reachable_blocks_and_public_addresses_pass() {
        for public in
            ["192.0.0.9", "192.31.196.1", "1.1.1.1", "93.184.216.34", "2001:1::1", "2001:4:112::1", "2606:4700::1111"]
        {
            assert_eq!(refusal(public.parse().unwrap()), None, "{public}");
        }
    }

    #[test]
    fn embedded_ipv4_is_decoded() {
        let cases = [
            ("::ffff:127.0.0.1", Some("IPv4-mapped 127.0.0.1: Loopback")),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::a9fe:a9fe", Some("NAT64 of 169.254.169.254: Link Local")),
            ("64:ff9b::808:808", None),
            ("64:ff9b:1::7f00:1", Some("IPv4-IPv6 Translat.")),
            ("::127.0.0.1", Some("IPv4-compatible (deprecated, RFC 4291) embedding 127.0.0.1")),
            ("2002:7f00:1::1", Some("6to4 embedding 127.0.0.1")),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("TEREDO embedding 192.0.2.45")),
            ("2606:4700::5efe:a00:1", Some("ISATAP embedding 10.0.0.1: Private-Use")),
            ("2606:4700::200:5efe:7f00:1", Some("ISATAP embedding 127.0.0.1: Loopback")),
            ("2606:4700::5efe:808:808", None),
            ("3fff::1", Some("Documentation")),
            ("5f00::1", Some("Segment Routing")),
            ("100:0:0:1::1", Some("Dummy IPv6 Prefix")),
            ("4000::1", Some("outside IPv6 global unicast space")),
            ("fec0::1", Some("outside IPv6 global unicast space")),
            ("ff02::1", Some("multicast")),
            ("239.1.1.1", Some("multicast")),
        ];
        for (address, expected) in cases {
            let got = refusal(address.parse().unwrap());
            match expected {
                None => assert_eq!(got, None, "{address}"),
                Some(start) => assert!(got.as_deref().is_some_and(|g| g.starts_with(start)), "{address}: {got:?}"),
            }
        }
    }
}
