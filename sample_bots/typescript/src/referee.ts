// The referee.proto messages this bot reads, as @grpc/proto-loader hands them over with
// { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true }: field names as in
// the .proto, 64-bit numbers as decimal strings, every field present. referee.proto is the manual.

export interface Trick {
  number: number;
  leader: number;
  lead_card: string;
  follow_card: string;
  winner: number;
  honours: number;
}

export interface View {
  seat: number;
  hand: string[];
  lead_card: string; // "" when you lead
  tricks: Trick[];
  phase: number;
  trump_card: string;
  trump_suit: string; // "" before the trump is known
  stock_size: number;
  lines: number[];
}

export interface TurnRequest {
  turn_id: string; // uint64: a decimal string (longs: String), echoed back unchanged
  view: View;
  legal_cards: string[];
}

export interface Welcome {
  seat: number;
  opponent_name: string;
  bot_seed: string; // a decimal string (longs: String)
}

export interface MatchResult {
  winner: number;
  lines: number[];
  verdicts: string[];
}

export type RefereeMessage =
  | { msg: "welcome"; welcome: Welcome }
  | { msg: "turn_request"; turn_request: TurnRequest }
  | { msg: "match_result"; match_result: MatchResult }
  | { msg: "error"; error: { code: string; message: string } }
  | { msg: "deal_result" };
