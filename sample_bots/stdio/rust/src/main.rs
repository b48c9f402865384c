//! Elfern Arena sample bot in Rust, speaking the stdio line protocol (docs/stdio.md).
//!
//! The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
//! object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
//! No crates (the sandbox's build is offline): the few fields it needs are found by name, which works
//! because the bridge writes every field in referee.proto's order, the view's own lead_card first.
//! Play is the greedy rule of sample_bots/python/greedy: following, beat a led honour with the lowest
//! card that does it, else throw the cheapest card that loses; leading, cash an ace, else the cheapest
//! card (blanks before honours, low before high; the card code breaks ties).
use std::io::{self, BufRead, Write};

const RANKS: &str = "789TJQKA";

fn rank(card: &str) -> usize {
    RANKS.find(&card[..1]).unwrap_or(0)
}

fn honour(card: &str) -> bool {
    rank(card) >= 3
}

fn suit(card: &str) -> &str {
    &card[card.len() - 1..]
}

fn beats(follow: &str, lead: &str, trump: &str) -> bool {
    if suit(follow) == suit(lead) {
        return rank(follow) > rank(lead);
    }
    !trump.is_empty() && suit(follow) == trump
}

fn cheapest<'a>(cards: &[&'a str]) -> &'a str {
    *cards.iter().min_by_key(|c| (honour(c), rank(c), **c)).expect("no cards")
}

fn lowest<'a>(cards: &[&'a str]) -> &'a str {
    *cards.iter().min_by_key(|c| (rank(c), **c)).expect("no cards")
}

fn choose<'a>(legal: &[&'a str], lead: &str, trump: &str) -> &'a str {
    if lead.is_empty() {
        let aces: Vec<&str> = legal.iter().copied().filter(|c| c.starts_with('A')).collect();
        return aces.iter().copied().min().unwrap_or_else(|| cheapest(legal));
    }
    let (winners, losers): (Vec<&str>, Vec<&str>) = legal.iter().partition(|c| beats(c, lead, trump));
    if !winners.is_empty() && honour(lead) {
        return lowest(&winners);
    }
    if losers.is_empty() {
        lowest(&winners)
    } else {
        cheapest(&losers)
    }
}

/// The string value of "key":"..." (its first occurrence), or "" when absent.
fn string_field<'a>(line: &'a str, key: &str) -> &'a str {
    let pattern = format!("\"{}\":\"", key);
    match line.find(&pattern) {
        Some(at) => {
            let rest = &line[at + pattern.len()..];
            &rest[..rest.find('"').unwrap_or(0)]
        }
        None => "",
    }
}

/// The cards of "legal_cards":["AS","7H",...].
fn legal_cards(line: &str) -> Vec<&str> {
    let pattern = "\"legal_cards\":[";
    let rest = match line.find(pattern) {
        Some(at) => &line[at + pattern.len()..],
        None => return Vec::new(),
    };
    let list = &rest[..rest.find(']').unwrap_or(0)];
    list.split(',').map(|s| s.trim().trim_matches('"')).filter(|s| !s.is_empty()).collect()
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        if !line.contains("\"type\":\"turn_request\"") {
            continue; // nothing else needs an answer
        }
        let legal = legal_cards(&line);
        if legal.is_empty() {
            eprintln!("no legal_cards in a turn_request line");
            std::process::exit(1);
        }
        let card = choose(&legal, string_field(&line, "lead_card"), string_field(&line, "trump_suit"));
        writeln!(out, "{{\"card\":\"{}\"}}", card).expect("stdout");
        out.flush().expect("stdout");
    }
}
