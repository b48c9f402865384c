// Elfern Arena sample bot in C#, speaking the stdio line protocol (docs/stdio.md).
//
// The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
// object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
// Mono's class library has no JSON parser that mcs reaches without extra assemblies, so the few
// fields it needs are found by name, which works because the bridge writes every field in
// referee.proto's order, the view's own lead_card first.
// Play is the greedy rule of sample_bots/python/greedy: following, beat a led honour with the lowest
// card that does it, else throw the cheapest card that loses; leading, cash an ace, else the cheapest
// card (blanks before honours, low before high; the card code breaks ties).
using System;
using System.Collections.Generic;
using System.Linq;

public static class Bot
{
    const string Ranks = "789TJQKA";

    static int Rank(string card) => Ranks.IndexOf(card[0]);
    static bool Honour(string card) => Rank(card) >= 3;
    static char Suit(string card) => card[card.Length - 1];

    static bool Beats(string follow, string lead, string trump)
    {
        if (Suit(follow) == Suit(lead)) return Rank(follow) > Rank(lead);
        return trump.Length > 0 && Suit(follow) == trump[0];
    }

    // Ordinal comparison of the codes: "7C" before "7H", as Python compares strings.
    static string Cheapest(IEnumerable<string> cards) =>
        cards.OrderBy(c => Honour(c) ? 1 : 0).ThenBy(Rank).ThenBy(c => c, StringComparer.Ordinal).First();

    static string Lowest(IEnumerable<string> cards) =>
        cards.OrderBy(Rank).ThenBy(c => c, StringComparer.Ordinal).First();

    static string Choose(List<string> legal, string lead, string trump)
    {
        if (lead.Length == 0)
        {
            var aces = legal.Where(c => c[0] == 'A').OrderBy(c => c, StringComparer.Ordinal).ToList();
            return aces.Count > 0 ? aces[0] : Cheapest(legal);
        }
        var winners = legal.Where(c => Beats(c, lead, trump)).ToList();
        if (winners.Count > 0 && Honour(lead)) return Lowest(winners);
        var losers = legal.Where(c => !winners.Contains(c)).ToList();
        return losers.Count > 0 ? Cheapest(losers) : Lowest(winners);
    }

    // The string value of "key":"..." (its first occurrence), or "" when absent.
    static string StringField(string line, string key)
    {
        string pattern = "\"" + key + "\":\"";
        int at = line.IndexOf(pattern, StringComparison.Ordinal);
        if (at < 0) return "";
        int start = at + pattern.Length;
        return line.Substring(start, line.IndexOf('"', start) - start);
    }

    // The cards of "legal_cards":["AS","7H",...].
    static List<string> LegalCards(string line)
    {
        const string pattern = "\"legal_cards\":[";
        int at = line.IndexOf(pattern, StringComparison.Ordinal);
        if (at < 0) return new List<string>();
        int start = at + pattern.Length;
        string list = line.Substring(start, line.IndexOf(']', start) - start);
        return list.Split(',').Select(s => s.Trim().Trim('"')).Where(s => s.Length > 0).ToList();
    }

    public static int Main()
    {
        string line;
        while ((line = Console.In.ReadLine()) != null)
        {
            if (!line.Contains("\"type\":\"turn_request\"")) continue; // nothing else needs an answer
            var legal = LegalCards(line);
            if (legal.Count == 0)
            {
                Console.Error.WriteLine("no legal_cards in a turn_request line");
                return 1;
            }
            string card = Choose(legal, StringField(line, "lead_card"), StringField(line, "trump_suit"));
            Console.Out.WriteLine("{\"card\":\"" + card + "\"}");
            Console.Out.Flush();
        }
        return 0;
    }
}
