// Elfern Arena sample bot in TypeScript, compiled by tsc in the sandbox (see docs/starter-typescript.md).
//
// Like the Node.js sample, it loads the arena's referee.proto at run time with @grpc/proto-loader,
// opens the one bidirectional stream Referee.Play, joins with ARENA_TOKEN and answers every
// TurnRequest with a card from its legal_cards. The play is greedy: beat a led honour with the
// cheapest card that does it, otherwise throw the cheapest losing card; lead an ace if it has one,
// else its cheapest card. Between equally cheap cards (one rank in two suits) it chooses with a
// generator seeded by Welcome.bot_seed (rng.ts), so the same --seed replays the same cards.
import { RefereeMessage, View } from "./referee";
import { Rng, seededRandom } from "./rng";

const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const RANKS = "789TJQKA";
const rank = (card: string): number => RANKS.indexOf(card[0]);
const isHonour = (card: string): boolean => rank(card) >= 3; // T J Q K A

// Does `follow` take the trick against `lead`? A higher card of the suit led, or a trump.
export function beats(follow: string, lead: string, trumpSuit: string): boolean {
  if (follow[1] === lead[1]) return rank(follow) > rank(lead);
  return trumpSuit !== "" && follow[1] === trumpSuit;
}

// Blanks before honours, low before high. Equally cheap cards are a free choice, made by `rng`.
function cheapest(cards: string[], rng: Rng): string {
  const cost = (c: string): number => (isHonour(c) ? 8 : 0) + rank(c);
  const low = Math.min(...cards.map(cost));
  return rng.pick(cards.filter((c) => cost(c) === low).sort());
}

const lowest = (cards: string[]): string => [...cards].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))[0];

export function choose(view: View, legal: string[], rng: Rng): string {
  const lead = view.lead_card;
  if (!lead) {
    const aces = legal.filter((c) => c[0] === "A").sort();
    return aces.length ? aces[0] : cheapest(legal, rng);
  }
  const winners = legal.filter((c) => beats(c, lead, view.trump_suit));
  if (winners.length && isHonour(lead)) return lowest(winners);
  const losers = legal.filter((c) => !winners.includes(c));
  return losers.length ? cheapest(losers, rng) : lowest(winners);
}

function main(): void {
  const address = process.env.ARENA_ADDRESS;
  const token = process.env.ARENA_TOKEN;
  if (!address || !token) {
    console.error("ARENA_ADDRESS and ARENA_TOKEN must be set (the arena sets them; see docs/starter-typescript.md)");
    process.exit(2);
  }
  const definition = protoLoader.loadSync(path.join(__dirname, "..", "proto", "referee.proto"), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const v1 = grpc.loadPackageDefinition(definition).elfern.arena.v1;
  const client = new v1.Referee(address, grpc.credentials.createInsecure());
  const call = client.Play();
  call.write({ join: { token, bot_name: "ts-greedy", bot_version: "1.0.0", protocol_version: 1 } });
  let rng = seededRandom(0); // replaced at the Welcome, which always comes first

  call.on("data", (message: RefereeMessage) => {
    switch (message.msg) {
      case "welcome":
        rng = seededRandom(message.welcome.bot_seed);
        console.log(`seat ${message.welcome.seat} against ${message.welcome.opponent_name}`);
        break;
      case "turn_request": {
        const turn = message.turn_request;
        call.write({ action: { turn_id: turn.turn_id, card: choose(turn.view, turn.legal_cards, rng) } });
        break;
      }
      case "match_result": {
        const r = message.match_result;
        console.log(`match over: winner ${r.winner}, lines ${r.lines.join("-")}, verdicts ${r.verdicts.join(",")}`);
        call.end();
        break;
      }
      case "error":
        console.error(`referee error ${message.error.code}: ${message.error.message}`);
        break;
      default:
        break; // deal_result: nothing to answer (deal_start and trick_result ride in turn_request)
    }
  });
  call.on("error", (err: { code: number; message: string }) => {
    // The referee closing the stream after MatchResult is normal; anything else is worth a line.
    if (err.code !== grpc.status.CANCELLED) console.error(`stream error: ${err.message}`);
  });
  call.on("end", () => client.close());
}

if (require.main === module) main();
