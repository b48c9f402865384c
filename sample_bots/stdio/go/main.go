// Elfern Arena sample bot in Go, speaking the stdio line protocol (docs/stdio.md).
//
// The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
// object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
// Play is the greedy rule of sample_bots/python/greedy: following, beat a led honour with the lowest
// card that does it, else throw the cheapest card that loses; leading, cash an ace, else the cheapest
// card (blanks before honours, low before high; the card code breaks ties).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// message holds the fields of a referee line this bot reads; encoding/json ignores the rest.
type message struct {
	Type string `json:"type"`
	View struct {
		LeadCard  string `json:"lead_card"`
		TrumpSuit string `json:"trump_suit"`
	} `json:"view"`
	LegalCards []string `json:"legal_cards"`
}

func rank(card string) int { return strings.IndexByte("789TJQKA", card[0]) }

func honour(card string) bool { return rank(card) >= 3 }

func suit(card string) byte { return card[len(card)-1] }

func beats(follow, lead, trump string) bool {
	if suit(follow) == suit(lead) {
		return rank(follow) > rank(lead)
	}
	return trump != "" && suit(follow) == trump[0]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cheapest: blanks before honours, low before high, the code breaking ties.
func cheapest(cards []string) string {
	c := append([]string(nil), cards...)
	sort.Slice(c, func(i, j int) bool {
		a, b := c[i], c[j]
		if honour(a) != honour(b) {
			return boolInt(honour(a)) < boolInt(honour(b))
		}
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		return a < b
	})
	return c[0]
}

func lowest(cards []string) string {
	c := append([]string(nil), cards...)
	sort.Slice(c, func(i, j int) bool {
		if rank(c[i]) != rank(c[j]) {
			return rank(c[i]) < rank(c[j])
		}
		return c[i] < c[j]
	})
	return c[0]
}

func choose(legal []string, lead, trump string) string {
	if lead == "" {
		var aces []string
		for _, c := range legal {
			if c[0] == 'A' {
				aces = append(aces, c)
			}
		}
		if len(aces) > 0 {
			sort.Strings(aces)
			return aces[0]
		}
		return cheapest(legal)
	}
	var winners, losers []string
	for _, c := range legal {
		if beats(c, lead, trump) {
			winners = append(winners, c)
		} else {
			losers = append(losers, c)
		}
	}
	if len(winners) > 0 && honour(lead) {
		return lowest(winners)
	}
	if len(losers) > 0 {
		return cheapest(losers)
	}
	return lowest(winners)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var msg message
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintln(os.Stderr, "not a JSON line:", err)
			os.Exit(1)
		}
		if msg.Type != "turn_request" { // nothing else needs an answer
			continue
		}
		if len(msg.LegalCards) == 0 {
			fmt.Fprintln(os.Stderr, "no legal_cards in a turn_request line")
			os.Exit(1)
		}
		fmt.Fprintf(out, "{\"card\":%q}\n", choose(msg.LegalCards, msg.View.LeadCard, msg.View.TrumpSuit))
		out.Flush()
	}
}
