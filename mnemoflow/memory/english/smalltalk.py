"""What conversation says that is not worth remembering.

Greetings, thanks, reactions to what the other person said ("That sounds amazing!"), feelings of the
moment ("I'm so tired"), promises to check something ("I'll ask Grace"), and advice to the listener
("You should totally go!") keep a chat going but say nothing durable about anyone. Each is matched
against the whole sentence (or, for small talk, every comma-separated part of it), so a sentence that
also carries a fact ("I'm so excited about our trip to Japan") is never thrown away for its padding.
"""

from __future__ import annotations

import re

INTENSIFIERS = r"(?:(?:so|really|very|super|pretty|a bit|a little|kinda|kind of|quite|totally|just|also|too|" \
               r"extremely|incredibly|truly|absolutely|still|all)\s+)*"
_REACTION_WORDS = (
    r"great|awesome|cool|amazing|wonderful|fantastic|lovely|beautiful|fun|exciting|interesting|hilarious|funny|"
    r"crazy|wild|tough|hard|sad|terrible|awful|too bad|a shame|true|fair|right|incredible|impressive|inspiring|"
    r"powerful|sweet|adorable|cute|nice|good|perfect|brilliant|rough|scary|huge|special|a lot|so much|stunning|"
    r"gorgeous|neat|dope|rad|epic|magical|breathtaking|lit|insane|unreal|fab|fabulous|excellent|outstanding|"
    r"remarkable|wow|hilarious|tragic|heartbreaking|devastating|intense|inspirational|thoughtful|kind|generous")
_SMALL_TALK = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|yo|howdy|bye|goodbye|thanks|thank you)(?:,? \w+)?|"
    r"good (?:morning|afternoon|evening|night)|morning|evening|bye bye|noted|understood|"
    r"see (?:you|ya)(?: later| soon| tomorrow| then| around)?|(?:talk|speak|chat)(?: to you| with you)? (?:later|soon)|"
    r"take care|cheers|"
    r"have (?:a|an) (?:good|great|nice|safe|wonderful|fun) \w+|good luck(?: with \w+)?|no problem(?: at all)?|"
    r"no worries|np|you're welcome|of course|sure(?: thing)?|ok(?:ay)?|k|cool|great|nice|awesome|amazing|wow|"
    r"lol|haha+|hehe|sounds (?:good|great|fun|amazing|awesome|lovely|like a plan|like fun)|got it|makes sense|"
    r"i see|i know(?: right)?|i agree|agreed|me too|same(?: here)?|i think so|i guess(?: so)?|i hope so|maybe|"
    r"definitely|absolutely|exactly|true|right|yes|yeah|yep|no|nope|nah|"
    r"good (?:to know|idea|point|for you|question|stuff)|nice to (?:meet|see|hear from) you|"
    r"(?:it's |it is |it was )?(?:so |really )?(?:good|great|nice|lovely) to "
    r"(?:see|hear from|meet|talk to|hear|chat with) "
    r"(?:you|that)(?: again)?|long time no see|how are you(?: doing)?|congrats\b.*|congratulations\b.*|well done|"
    r"good job|happy (?:birthday|holidays|new year)|"
    r"(?:that|this|it|that all)(?:'s| is| was| sounds| looks| seems)(?: like)? " + INTENSIFIERS +
    r"(?:a |an |such a |such an )?(?:" + _REACTION_WORDS + r")(?: \w+)?|"
    r"(?:what|how) (?:a |an )?" + INTENSIFIERS + r"(?:" + _REACTION_WORDS + r")(?: \w+)?|"
    r"you're (?:right|welcome|the best|amazing|awesome|a lifesaver|so sweet|too kind)|you (?:too|rock)|"
    r"thanks?\b.*|thank you\b.*|thx\b.*|ty|ta|much appreciated|appreciate (?:it|that)|i appreciate (?:it|that|you)\b.*|"
    r"no way|oh no|omg|yay|aww+|ugh|hmm+|oops|not sure|i don't know|dunno|idk|never mind|nevermind|"
    r"don't worry(?: about it)?|let me (?:know|think|check|see)\b.*|feel free\b.*|hope (?:that|this|it) helps|"
    r"happy to help|glad (?:to help|i could help|to hear (?:it|that))|"
    r"(?:i'm )?(?:glad|happy|sorry) to hear (?:that|it)|"
    r"i can imagine|i bet|for sure|totally|honestly|anyway|good|fine|not bad|doing (?:well|good|great|fine|ok|okay)|"
    r"i feel you|i hear you|i get it|i understand|i mean|you know|i love (?:it|that|this)|love (?:it|that|this)|"
    r"i'm (?:sure|in)|(?:nah|no),? i'm (?:good|ok|okay|fine|all good)(?: for now)?|count me in|will do|i will|same to you|you as well|miss you|love you|long time no talk|"
    r"i (?:\S+ )?agree\b.*|"
    r"(?:i'm |so |really )?(?:glad|cool|great|nice|awesome|amazing|good|happy|love) (?:that )?you\b.*|"
    r"(?:sounds|looks|seems) like\b.*|wishing you\b.*|appreciate\b.*|here(?:'s| is| are)\b.*|"
    r"(?:take a look|look at this|check this out)\b.*|keep (?:it )?up\b.*|good for you\b.*|"
    r"long time no (?:see|talk|chat|speak)\b.*|can't wait\b.*|i hope (?:you|that you|your)\b.*|"
    r"hope (?:you|that you|your)\b.*|(?:i )?wish (?:i|you|we) could\b.*|(?:that )?works for (?:me|us)|that works|"
    r"(?:i(?:'ll| will)|will) (?:check|ask|look|see|try|think|get back|let you know|find out|text|email|ping|confirm|"
    r"double-check|have a look|have a think|come back to you|keep an eye|figure|come to|go with|take it|sort it|handle it|"
    r"keep you posted)\b.*|"
    r"(?:it's|it is) (?:raining|pouring|snowing|freezing|boiling|roasting|so (?:hot|cold|grim|grey|windy))\b.*|"
    r"i can't sleep|(?:you two )?sort it out\b.*|i can tell|i could tell|you bet|anytime|"
    r"(?:we(?:'ll| will)|let's|lets) see(?: how it goes)?|time will tell|who knows|fingers crossed)"
    r"(?: too| as well| again| so much| all)*$", re.I)
_EMOTION = re.compile(
    r"^(?:(?:i'm|i am|i was|i feel|i felt|i've been|we're|we are|we were|feeling|been)\s+)?" + INTENSIFIERS +
    r"(?:happy|glad|excited|tired|busy|good|fine|great|ok|okay|well|sad|stressed|thankful|grateful|sorry|bored|"
    r"exhausted|swamped|proud|nervous|anxious|worried|thrilled|pumped|stoked|blessed|lucky|jealous|curious|"
    r"relieved|overwhelmed|amazed|impressed|down|upset|doing \w+|so|touched|moved)\b", re.I)
_ADVICE = re.compile(
    r"^(?:you should|you could|you might|you can|you have to|you need to|you must|you gotta|you ought to|"
    r"maybe you|why don't you|you'll love|you'd love|you will love|you would love|you'll have|"
    r"definitely (?:try|check|go|visit)|try |check out|make sure you|don't forget to)\b", re.I)


def is_small_talk(text: str) -> bool:
    """Whether every comma-separated part is small talk: "Sounds good, see you then"."""
    parts = [p for p in re.split(r"[,;]\s*", text) if p.strip()]
    return bool(parts) and all(_SMALL_TALK.match(p.strip()) for p in parts)


def is_feeling(text: str) -> bool:
    """A feeling of the moment ("I'm so swamped"); the caller keeps it when it names something too."""
    return bool(_EMOTION.match(text))


def is_advice(text: str) -> bool:
    """Advice to the listener ("You should try the ramen"): about what they could do, not what they do."""
    return bool(_ADVICE.match(text))
