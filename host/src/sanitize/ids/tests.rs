use super::*;
use serde_json::json;

const KNOWN: &str = "721797098567ca69c8d8f724033dc6ec8670d50b";
const FORGED: &str = "73b27882a8e70d1ee8a56aa648c836e9f556b6ce";

fn scrub(line: &str) -> String {
    let args = json!({"id": KNOWN}).as_object().cloned().unwrap_or_default();
    let known = Known::default().sent(&args);
    replace_forged(line, &known, &mut Scanner::default()).0.into_owned()
}

#[test]
fn known_ids_stay_and_others_go_in_any_disguise() {
    assert_eq!(scrub(&format!("id {KNOWN}")), format!("id {KNOWN}"));
    assert_eq!(scrub(&format!("id {}", KNOWN.to_uppercase())), format!("id {}", KNOWN.to_uppercase()));
    let grouped: Vec<String> = FORGED.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into()).collect();
    let escaped: String = FORGED.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let html: String = FORGED.chars().map(|c| format!("&#{};", c as u32)).collect();
    let percent: String = FORGED.chars().map(|c| format!("%{:02X}", c as u32)).collect();
    let fullwidth: String = FORGED.chars().map(|c| char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c)).collect();
    let cyrillic = FORGED.replace('a', "а").replace('e', "е").replace('c', "с");
    let bytes: Vec<u8> =
        (0..FORGED.len()).step_by(2).filter_map(|i| u8::from_str_radix(&FORGED[i..i + 2], 16).ok()).collect();
    // `⑺`, `⓪`, `⒝`: a digit or letter in brackets or a circle.
    let enclosed_form = |c: char| match c.to_digit(16) {
        Some(0) => '⓪',
        Some(d @ 1..=9) => char::from_u32(0x2473 + d).unwrap_or(c),
        Some(d) => char::from_u32(0x249C + d - 10).unwrap_or(c),
        None => c,
    };
    for disguise in [
        FORGED.to_owned(),
        FORGED.to_uppercase(),
        grouped.join("-"),
        grouped.join(" "),
        grouped.join("', '"),
        escaped,
        html,
        percent,
        fullwidth,
        cyrillic,
        format!("0x{FORGED}"),
        format!("{FORGED}{FORGED}"),
        // Longer separators: a comment of HTML or C, an ellipsis; `0x`
        // before every chunk.
        grouped.join("<!-- -->"),
        grouped.join(" /* */ "),
        grouped.join(" ... "),
        grouped.iter().map(|g| format!("0x{g}")).collect::<Vec<_>>().join(" "),
        // Markup that shows nothing, however long.
        grouped.join("<span></span>"),
        grouped.join("<!-- a longer comment than a separator -->"),
        grouped.join("&shy;"),
        format!("{}<em class=\"x\"></em>{}", &FORGED[..20], &FORGED[20..]),
        // Written byte by byte: the escapes' own hex digits.
        bytes.iter().map(|b| format!("%{b:02x}")).collect(),
        bytes.iter().map(|b| format!("%{b:02X} ")).collect(),
        bytes.iter().map(|b| format!("\\x{b:02x}")).collect(),
        bytes.iter().map(|b| format!("&#x{b:02x};")).collect(),
        bytes.iter().map(|b| format!("\\u00{b:02x}")).collect(),
        // Digits of other scripts beside ASCII letters; enclosed ones.
        FORGED.chars().map(|c| c.to_digit(10).map_or(c, |d| char::from_u32(0x660 + d).unwrap_or(c))).collect(),
        FORGED.chars().map(|c| c.to_digit(10).map_or(c, |d| char::from_u32(0x966 + d).unwrap_or(c))).collect(),
        FORGED.chars().map(enclosed_form).collect(),
        // Marks on every character, or on its letters.
        FORGED.chars().flat_map(|c| [c, '\u{332}']).collect(),
        FORGED.replace('e', "é").replace('a', "\u{0061}\u{301}"),
        // Other escapes: octal, `\U`, `%u`, `\x{…}`.
        FORGED.chars().map(|c| format!("\\{:03o}", c as u32)).collect(),
        FORGED.chars().map(|c| format!("\\U{:08x}", c as u32)).collect(),
        FORGED.chars().map(|c| format!("%u{:04x}", c as u32)).collect(),
        FORGED.chars().map(|c| format!("\\x{{{:x}}}", c as u32)).collect(),
        // Numbered labels between the halves (`(1/2): …`, after the
        // first: its label stays), a long run of one separator.
        format!("{} (2/2): {}", &FORGED[..20], &FORGED[20..]),
        format!("{} 2) {}", &FORGED[..20], &FORGED[20..]),
        format!("{}{}{}", &FORGED[..20], " ".repeat(14), &FORGED[20..]),
        format!("{}{}{}", &FORGED[..20], ".".repeat(14), &FORGED[20..]),
    ] {
        let out = scrub(&format!("see {disguise} now"));
        let rest = out.replace(REPLACED_ID, "");
        assert!(out.contains(REPLACED_ID) && rest.len() <= "see 0x now".len(), "{disguise}: {out}");
        assert!(!rest.contains(&FORGED[..4]) && !rest.contains(&FORGED[36..]), "{disguise}: {out}");
    }
}

#[test]
fn prose_and_numbers_are_not_ids() {
    for line in [
        "a bad cafe faced a decade of added beef, a dead face, a bead",
        "lines 10, 22, 35, 47, 59, 61, 73, 85, 97, 101, 113, 125, 137, 149, 150, 151",
        "out: DECLARES 5, DECLARES.CALLS 5, DECLARES.EXPOSES 4",
        "sha 1234",
        // An id's first 39 digits, then a word starting with a hex
        // letter: that letter is the word's, not the id's.
        "73b27882a8e70d1ee8a56aa648c836e9f556b6c? (append the letter e)",
        "columns:   10    22    35    47    59    61    73    85    97   101",
        "https://example.com/a%20b%2Fc?q=%7Bx%7D",
        "steps 1) 2) 3) of 12",
    ] {
        assert_eq!(scrub(line), line);
    }
}

#[test]
fn ids_in_hints_history_and_results_are_known() {
    let hint = json!({"ids": [FORGED]}).as_object().cloned().unwrap_or_default();
    let known = Known::default().hint(&hint);
    assert_eq!(replace_forged(FORGED, &known, &mut Scanner::default()).1, 0);
    let history = vec![FORGED.to_owned()];
    assert_eq!(replace_forged(FORGED, &Known::default().history(&history), &mut Scanner::default()).1, 0);
    let result = json!({"results": [{"doc": format!("commit {}", FORGED.to_uppercase())}]});
    assert_eq!(replace_forged(FORGED, &Known::default().result(&result), &mut Scanner::default()).1, 0);
    // Carved out of a longer hex string, it is not known.
    let longer = json!({"doc": format!("{FORGED}00")});
    assert_eq!(replace_forged(FORGED, &Known::default().result(&longer), &mut Scanner::default()).1, 1);
}
