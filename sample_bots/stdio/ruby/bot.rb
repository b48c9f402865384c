# Elfern Arena sample bot in Ruby, speaking the stdio line protocol (docs/stdio.md).
#
# The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
# object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
# Play is the greedy rule of sample_bots/python/greedy: following, beat a led honour with the lowest
# card that does it, else throw the cheapest card that loses; leading, cash an ace, else the cheapest
# card (blanks before honours, low before high; the card code breaks ties).
require "json"

RANKS = "789TJQKA"

def rank_value(card) = RANKS.index(card[0])
def honour?(card) = rank_value(card) >= 3

def beats?(follow, lead, trump)
  return rank_value(follow) > rank_value(lead) if follow[-1] == lead[-1]
  !trump.empty? && follow[-1] == trump
end

def cheapest(cards) = cards.min_by { |c| [honour?(c) ? 1 : 0, rank_value(c), c] }
def lowest(cards) = cards.min_by { |c| [rank_value(c), c] }

def choose(legal, lead, trump)
  if lead.empty?
    aces = legal.select { |c| c[0] == "A" }.sort
    return aces.empty? ? cheapest(legal) : aces.first
  end
  winners = legal.select { |c| beats?(c, lead, trump) }
  return lowest(winners) if !winners.empty? && honour?(lead)
  losers = legal - winners
  losers.empty? ? lowest(winners) : cheapest(losers)
end

$stdout.sync = true
$stdin.each_line do |line|
  msg = JSON.parse(line)
  next unless msg["type"] == "turn_request" # nothing else needs an answer
  view = msg["view"]
  card = choose(msg["legal_cards"], view["lead_card"], view["trump_suit"])
  puts JSON.generate({ card: card })
end
