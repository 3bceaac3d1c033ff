"""One turn that ends a thing and names what came instead: "The Fitbit finally died, I'm wearing a Garmin
Venu 2 now", "traded the Octavia in, got a Kia Niro EV", "offloaded the Ridgeline, picked up a Kestrel".
The clause that ends the thing replaces what was said of it (see `relations`); the clause that names the
new thing is what holds now, so it replaces that memory too (`takes_its_place`). The caller decides the
turn's ending clauses first, whatever order they were said in.
"""

from __future__ import annotations

import re

from mnemoflow.memory.relate.claim_words import ENDED
from mnemoflow.memory.relate.claims import Claim
from mnemoflow.memory.relate.restate import adds_alongside, asserted

# the verbs that end the thing they name, or that end the subject itself ("the Fitbit died")
_ENDING = re.compile(rf"\b(?:died|retired|(?:is|'s|was|were|got|been) (?:{ENDED})|traded\b.*?\bin\b|sold|offloaded|got rid of|gave away|"
                     r"escaped|left|closed|cancell?ed|quit|dropped|dumped|ditched|scrapped|binned|abandoned|broke down|"
                     r"gave up on|stopped (?:using|going to|buying|ordering))\b",
                     re.IGNORECASE)
# a thing come into one's life: what may take the place of the thing that ended ("moved everything over to")
_WHAT = r"(?: (?:it|them|everything|all|all of it|my \w+|our \w+))?"
_ACQUIRED = re.compile(r"\b(?:got|bought|picked up|ordered|signed up|joined|adopted|switched|went with|"
                       rf"moved{_WHAT}(?: over| across)? (?:in)?to|(?:gone|went){_WHAT} (?:over|across) to|"
                       r"ended up (?:going )?with)\b", re.IGNORECASE)


def ends_a_thing(text: str) -> bool:
    """Whether a statement says something ended ("the Fitbit finally died", "cancelled Ladlebox")."""
    return bool(_ENDING.search(text))


def takes_its_place(claim: Claim, kind: str, ended_kind: str) -> bool:
    """A statement that can stand in for what the same turn ended: said as the case now, nothing added
    alongside ("too"), not itself an ending, and announced ("now", "instead") or acquired ("got",
    "picked up"); of the ended memory's kind, or the event of acquiring what replaces a fact."""
    acquired = bool(_ACQUIRED.search(claim.main))
    if kind != ended_kind and not (acquired and kind == "episode" and ended_kind == "fact"):
        return False
    return asserted(claim) and not adds_alongside(claim) and not ends_a_thing(claim.text) and \
        claim.modality != "plan" and bool(claim.change or acquired)
