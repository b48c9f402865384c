/* Elfern Arena sample bot in Java, speaking the stdio line protocol (docs/stdio.md).
 *
 * The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
 * object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
 * No JSON library (the JDK has none): the few fields it needs are found by name, which works because
 * the bridge writes every field in referee.proto's order, the view's own lead_card first.
 * Play is the greedy rule of sample_bots/python/greedy: following, beat a led honour with the lowest
 * card that does it, else throw the cheapest card that loses; leading, cash an ace, else the cheapest
 * card (blanks before honours, low before high; the card code breaks ties).
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

public final class Bot {
  private static final String RANKS = "789TJQKA";

  static int rank(String card) {
    return RANKS.indexOf(card.charAt(0));
  }

  static boolean honour(String card) {
    return rank(card) >= 3;
  }

  static boolean beats(String follow, String lead, String trump) {
    char suit = follow.charAt(follow.length() - 1);
    if (suit == lead.charAt(lead.length() - 1)) return rank(follow) > rank(lead);
    return !trump.isEmpty() && suit == trump.charAt(0);
  }

  static final Comparator<String> CHEAPEST =
      Comparator.comparing((String c) -> honour(c) ? 1 : 0)
          .thenComparing(Bot::rank)
          .thenComparing(Comparator.naturalOrder());
  static final Comparator<String> LOWEST =
      Comparator.comparing(Bot::rank).thenComparing(Comparator.naturalOrder());

  static String choose(List<String> legal, String lead, String trump) {
    if (lead.isEmpty()) {
      return legal.stream()
          .filter(c -> c.charAt(0) == 'A')
          .min(Comparator.naturalOrder())
          .orElseGet(() -> legal.stream().min(CHEAPEST).orElseThrow());
    }
    List<String> winners = new ArrayList<>();
    List<String> losers = new ArrayList<>();
    for (String c : legal) (beats(c, lead, trump) ? winners : losers).add(c);
    if (!winners.isEmpty() && honour(lead)) return winners.stream().min(LOWEST).orElseThrow();
    if (!losers.isEmpty()) return losers.stream().min(CHEAPEST).orElseThrow();
    return winners.stream().min(LOWEST).orElseThrow();
  }

  /** The string value of "key":"..." (its first occurrence), or "" when absent. */
  static String stringField(String line, String key) {
    String pattern = "\"" + key + "\":\"";
    int at = line.indexOf(pattern);
    if (at < 0) return "";
    int start = at + pattern.length();
    return line.substring(start, line.indexOf('"', start));
  }

  /** The cards of "legal_cards":["AS","7H",...]. */
  static List<String> legalCards(String line) {
    List<String> cards = new ArrayList<>();
    String pattern = "\"legal_cards\":[";
    int at = line.indexOf(pattern);
    if (at < 0) return cards;
    String list = line.substring(at + pattern.length(), line.indexOf(']', at));
    for (String item : list.split(",")) {
      String card = item.trim().replace("\"", "");
      if (!card.isEmpty()) cards.add(card);
    }
    return cards;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (!line.contains("\"type\":\"turn_request\"")) continue; // nothing else needs an answer
      List<String> legal = legalCards(line);
      if (legal.isEmpty()) {
        System.err.println("no legal_cards in a turn_request line");
        System.exit(1);
      }
      String card = choose(legal, stringField(line, "lead_card"), stringField(line, "trump_suit"));
      System.out.println("{\"card\":\"" + card + "\"}");
      System.out.flush();
    }
  }
}
