"""Word lists several parts of the rules share, one list per concept: month and weekday names, month
abbreviations, seasons, the connectors inside names, abbreviations with a period, the number words
up to twelve, the product lines that say what kind of device a thing is, and the food allergens. A module
that needs more (temporal's "a couple of", claims' "dozen") extends these rather than keeping its own copy."""

from __future__ import annotations

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
MONTH_NUMBERS = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}  # "january" -> 1
MONTH_ABBREVIATIONS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
                       "oct": 10, "nov": 11, "dec": 12}
# northern-hemisphere meteorological seasons, each with its months (the first is where it starts)
SEASONS = {"spring": (3, 4, 5), "summer": (6, 7, 8), "fall": (9, 10, 11), "autumn": (9, 10, 11),
           "winter": (12, 1, 2)}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# lower-case words inside a name: "Vincent van Gogh", "Bank of England", "Procter & Gamble"
NAME_CONNECTORS = frozenset({"du", "de", "da", "del", "van", "von", "der", "la", "le", "of", "&"})
# words written with a period that ends no sentence ("Dr. Chen", "e.g.", "5 p.m.")
ABBREVIATIONS = frozenset({"dr", "mr", "mrs", "ms", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "approx", "no", "inc",
                           "ltd", "co", "mt", "ft", "prof", "u.s", "a.m", "p.m"})
NUMBERS_TO_TWELVE = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                     "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
# chat spellings of contractions without the apostrophe ("im", "couldnt"): only forms that are no other
# word ("its", "well", "ill", "id", "hell", "were", "lets" are), mapped to the written form
CONTRACTIONS_UNMARKED = {
    "im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't", "cant": "can't",
    "couldnt": "couldn't", "wouldnt": "wouldn't", "shouldnt": "shouldn't", "wasnt": "wasn't", "werent": "weren't",
    "isnt": "isn't", "arent": "aren't", "havent": "haven't", "hasnt": "hasn't", "hadnt": "hadn't", "wont": "won't",
    "whats": "what's", "thats": "that's", "theres": "there's", "hes": "he's", "shes": "she's", "youre": "you're",
    "theyre": "they're", "weve": "we've", "youve": "you've", "theyve": "they've", "itll": "it'll",
}
# chat spellings of everyday words, written out so a memory and a query use the same word
CHAT_SPELLINGS = {"u": "you", "pls": "please", "plz": "please", "bday": "birthday", "tmrw": "tomorrow",
                  "tmr": "tomorrow", "tomoz": "tomorrow", "yr": "year", "yrs": "years", "wk": "week", "wks": "weeks",
                  "bro": "brother", "thx": "thanks", "ppl": "people", "appt": "appointment", "abt": "about"}
# English words other languages written in Latin letters rarely use ("in", "so", "was", "will" and "a" they do):
# a sentence with one of them is read as English (`language`)
ENGLISH_FUNCTION_WORDS = frozenset("""
the and of to i you my your me it its it's this that with for have has had not be we they he she our their his her
at on just what can could would should do does did don't i'm i've i'll you're we're they're there here from by
about been were are is am
""".split())
# family named the way one addresses them, with no "my" ("Mum's hip op", "dad wants to come")
ADDRESSED_KIN = frozenset({"mum", "mom", "mam", "gran", "granny", "nan", "nana", "grandma", "dad", "grandad",
                           "granddad", "grandpa"})

# Product lines and the one device of a kind each is (a new phone replaces the phone): names that say the kind
DEVICE_CLASSES: dict[str, frozenset[str]] = {
    "phone": frozenset("""
        iphone pixel galaxy oneplus xperia fairphone nokia motorola moto blackberry huawei xiaomi redmi oppo
        """.split()),
    "laptop": frozenset("""
        macbook thinkpad chromebook zenbook xps ideapad vivobook inspiron elitebook probook
        """.split()),
    # makes and models (not those that are as often a name or a word: Mercedes, Zoe, Superb, Accord); "golf",
    # "jazz" count as written as a product only (`claim_values.device_at`)
    "car": frozenset("""
        honda kia toyota hyundai nissan skoda volkswagen vw renault peugeot citroen vauxhall opel mazda subaru
        volvo audi bmw lexus fiat tesla ford chevrolet chevy dodge dacia cupra polestar porsche
        mitsubishi suzuki
        octavia kodiaq karoq enyaq fabia kamiq golf polo passat tiguan touran corsa astra mokka fiesta
        kuga mondeo mustang civic jazz cr-v hr-v corolla yaris prius rav4 camry aygo auris qashqai juke
        micra x-trail clio megane captur ev6 ev9 niro sportage ceed picanto sorento ioniq tucson i10
        i20 i30 elantra impreza crosstrek cx-5 cx-30 mx-5 xc40 xc60 xc90 v60 f-150 silverado
        wrangler altima sentra tacoma taycan macan e-tron
        """.split()),
    # bike makes, written as a product only (`claim_values.device_at`): "Trek", not "a trek up the hill"
    "bike": frozenset("""
        trek brompton cannondale bianchi pinarello cervelo colnago orbea boardman vanmoof lapierre merida ribble
        """.split()),
    "e-reader": frozenset({"kindle", "kobo", "boox"}),
    "watch": frozenset({"fitbit", "garmin", "forerunner", "fenix", "venu"}),
    "tablet": frozenset({"ipad"}),
    "console": frozenset({"playstation", "ps4", "ps5", "xbox"}),
}
# any product line as a pattern, longest first ("cr-v" before "cr")
DEVICE_WORDS = "|".join(sorted((w.replace("-", r"\-") for ws in DEVICE_CLASSES.values() for w in ws), key=len,
                               reverse=True))
# a product line named with up to two words before it and its model after it: "2012 honda civic", "galaxy s23",
# "kobo clara 2e" (the group "thing")
DEVICE_PHRASE = (rf"(?P<thing>(?:[\w-]+\s+){{0,2}}(?:{DEVICE_WORDS})(?:(?:\s+[a-z]+)?\s+[\w-]*\d[\w-]*)?)"
                 r"(?![\w-])")
# the food allergens, each with the foods that hold it, and the words said for them
ALLERGENS: dict[str, frozenset[str]] = {
    "tree nut": frozenset({"almond", "walnut", "cashew", "pecan", "pistachio", "hazelnut", "macadamia",
                           "marzipan", "praline", "brazil nut", "pine nut"}),
    "peanut": frozenset({"peanut", "satay"}),
    "shellfish": frozenset({"shrimp", "prawn", "crab", "lobster", "crayfish", "langoustine", "scampi",
                            "mussel", "oyster", "clam", "scallop"}),
    "fish": frozenset({"salmon", "tuna", "cod", "anchovy", "sardine", "trout", "haddock", "mackerel"}),
    "milk": frozenset({"milk", "cheese", "butter", "cream", "yogurt", "yoghurt", "cheesecake"}),
    "egg": frozenset({"egg", "meringue", "mayonnaise"}),
    "wheat": frozenset({"wheat", "bread", "pasta", "couscous", "semolina"}),
    "soy": frozenset({"soy", "tofu", "edamame", "tempeh"}),
    "sesame": frozenset({"sesame", "tahini", "hummus"}),
}
ALLERGEN_ALIASES = {"tree nuts": "tree nut", "nuts from trees": "tree nut", "peanuts": "peanut", "dairy": "milk",
                     "eggs": "egg", "gluten": "wheat", "soya": "soy", "shellfish": "shellfish", "fish": "fish",
                     "sesame seeds": "sesame"}
