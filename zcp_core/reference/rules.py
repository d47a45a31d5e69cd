"""Rule tables for the deterministic rewording in :mod:`zcp_core.reference.paraphrase`.

Kept apart from the code so the tables can grow without touching the logic.
Every rule keeps numbers and number-bearing words ("half", "twice", "dozen")
untouched; a rule's alternatives are picked per (seed, item, version).
"""

from __future__ import annotations

# (regex, alternatives). Applied in order, case-preserving on the first letter; a rule never fires on
# text an earlier rule produced (replacements are protected until the end).
PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"(?<!in )\b(?:each|every|per|a) day\b", ("daily",)),
    (r"(?<!in )\b(?:each|every|per|a) week\b", ("weekly",)),
    (r"(?<!in )\b(?:each|every|per|a) month\b", ("monthly",)),
    (r"(?<!in )\b(?:each|every|per|a) year\b", ("annually", "yearly")),
    (r"\bper hour\b", ("an hour", "hourly")),
    (r"\bin total\b", ("altogether", "in all")),
    (r"\bthe total\b", ("the overall", "the full")),
    (r"\btotal\b", ("overall", "combined")),
    (r"\bthe number of\b", ("the count of", "the quantity of")),
    (r"\bthe amount of\b", ("the quantity of", "the sum of")),
    (r"\bthe rest of\b", ("the remainder of",)),
    (r"\bhow much time\b", ("what length of time",)),
    (r"\bhow much money\b", ("what sum of money", "what amount of money")),
    (r"\bneeds to\b", ("has to",)),
    (r"\bneed to\b", ("have to",)),
    (r"\bwants to\b", ("would like to", "hopes to")),
    (r"\bwant to\b", ("would like to", "hope to")),
    (r"\bwanted to\b", ("hoped to", "meant to")),
    (r"\bdecides to\b", ("chooses to", "makes up her mind to")),
    (r"\bdecided to\b", ("chose to", "opted to")),
    (r"\bdecide to\b", ("choose to", "opt to")),
    (r"\bplans to\b", ("intends to", "means to")),
    (r"\bplanned to\b", ("intended to",)),
    (r"\bis going to\b", ("will",)),
    (r"\bare going to\b", ("will",)),
    (r"\bat the end of\b", ("by the close of", "when finishing")),
    (r"\bhow many\b", ("what number of",)),
    (r"\bhow much\b", ("what amount",)),
    (r"\bhow long\b", ("what length of time",)),
    (r"\bhow old\b", ("what age",)),
    (r"\bhow far\b", ("what distance",)),
    (r"\bhow fast\b", ("at what speed",)),
    (r"\bhow tall\b", ("what height",)),
    (r"\bwhat is\b", ("what's",)),
    (r"\bwhat's\b", ("what is",)),
    (r"\bcalculate\b", ("work out", "compute", "figure out")),
    (r"\bfind\b", ("determine", "work out")),
    (r"\bdetermine\b", ("find", "work out")),
    (r"\beach of\b", ("every one of", "all of")),
    (r"(?:^|(?<=\. )|(?<=on )|(?<=in )|(?<=for )|(?<=at )|(?<=of )|(?<=to )|(?<=from )|(?<=with )|(?<=by )|(?<=and ))each(?= (?!(?:for|of|in|at|to|on|and|with|from|by|other|others|one|month|week|day|year)\b)[a-z])", ("every",)),
    (r"\beach\b", ("apiece",)),
    (r"\bevery(?= [a-z])", ("each",)),
    (r"\bper\b", ("for each", "for every")),
    (r"\bbuys\b", ("purchases", "picks up")),
    (r"\bbuy\b", ("purchase", "pick up")),
    (r"\bbought\b", ("purchased", "picked up")),
    (r"\bbuying\b", ("purchasing",)),
    (r"\bgets(?= (?:a|an|the|some|his|her|their|\$|\d))", ("receives", "obtains")),
    (r"\bget(?= (?:a|an|the|some|his|her|their|\$|\d))", ("receive", "obtain")),
    (r"\bgot(?= (?:a|an|the|some|his|her|their|\$|\d))", ("received", "obtained")),
    (r"\bgives\b", ("hands", "passes")),
    (r"\bgive\b", ("hand", "pass")),
    (r"\bgave\b", ("handed", "passed")),
    (r"\bwants\b", ("would like", "desires")),
    (r"\bwant\b", ("would like", "desire")),
    (r"\bneeds\b", ("requires",)),
    (r"\bneed\b", ("require",)),
    (r"\bneeded\b", ("required",)),
    (r"\bearns\b", ("makes", "brings in")),
    (r"\bearn\b", ("make", "bring in")),
    (r"\bearned\b", ("made", "brought in")),
    (r"\buses\b", ("utilizes", "makes use of")),
    (r"\bused(?! to)\b", ("utilized", "made use of")),
    (r"\buse\b", ("utilize", "make use of")),
    (r"\bstarts\b", ("begins",)),
    (r"\bstarted\b", ("began",)),
    (r"\bstart\b", ("begin",)),
    (r"\bbegins\b", ("starts",)),
    (r"\bfinishes\b", ("completes",)),
    (r"\bfinished\b", ("completed",)),
    (r"\bfinish\b", ("complete",)),
    (r"\bcosts(?= \$)", ("is priced at", "sells for")),
    (r"\bprice\b", ("cost",)),
    (r"\bprices\b", ("costs",)),
    (r"\bmoney\b", ("cash", "funds")),
    (r"\bamount\b", ("quantity", "sum")),
    (r"\bremaining\b", ("leftover", "other")),
    (r"\balso\b", ("additionally", "as well")),
    (r"\bthen\b", ("after that", "next")),
    (r"\bbefore\b", ("prior to", "ahead of")),
    (r"\bduring\b", ("throughout", "over")),
    (r"\btogether\b", ("combined", "between them")),
    (r"\baltogether\b", ("in total",)),
    (r"(?<!\ban )(?<!\bon )\baverage\b", ("mean",)),
    (r"(?<=the )store\b|(?<=a )store\b", ("shop",)),
    (r"(?<=the )stores\b", ("shops",)),
    (r"\bfriends\b", ("pals", "buddies")),
    (r"\bfriend\b", ("pal", "buddy")),
    (r"\bstudents\b", ("pupils",)),
    (r"\bstudent\b", ("pupil",)),
    (r"\bchildren\b", ("kids",)),
    (r"\bchild\b", ("kid",)),
    (r"\bkids\b", ("children",)),
    (r"\blarge\b", ("big",)),
    (r"\bbig\b", ("large",)),
    (r"\bsmall\b", ("little",)),
    (r"\btrip\b", ("journey",)),
    (r"\btrips\b", ("journeys",)),
    (r"\bcar\b", ("vehicle",)),
    (r"\bcars\b", ("vehicles",)),
    (r"\bhouse\b", ("home",)),
    (r"\bquickly\b", ("fast",)),
    (r"\bstarts? with\b", ("begins with",)),
    (r"\bsells\b", ("sells off", "vends")),
    (r"\bsold\b", ("sold off", "vended")),
    (r"\bspends\b", ("pays out", "lays out")),
    (r"\bspent\b", ("paid out", "laid out")),
    (r"\bspend\b", ("pay out", "lay out")),
    (r"\bpays\b", ("hands over",)),
    (r"\bcollects\b", ("gathers",)),
    (r"\bcollected\b", ("gathered",)),
    (r"\breceives\b", ("gets",)),
    (r"\breceived\b", ("got",)),
    (r"\bonly\b", ("just",)),
    (r"\bjust\b", ("only",)),
    (r"\beats\b", ("consumes",)),
    (r"\bate\b", ("consumed",)),
    (r"\beat\b", ("consume",)),
    (r"\bworks\b", ("labors",)),
    (r"\bworked\b", ("labored",)),
    (r"\bgoes\b", ("heads",)),
    (r"\bwent\b", ("headed",)),
    (r"\bsaves\b", ("puts aside",)),
    (r"\bsave\b", ("put aside",)),
    (r"\bsaved\b", ("put aside",)),
    (r"\bwalks\b", ("strolls",)),
    (r"\bwalk\b", ("stroll",)),
    (r"\bruns\b", ("jogs",)),
    (r"\bcompany\b", ("firm", "business")),
    (r"\bsame\b", ("identical",)),
    (r"\bdifferent\b", ("distinct", "separate")),
    (r"\bextra\b", ("additional",)),
    (r"\breads\b", ("goes through",)),
    (r"\benough\b", ("sufficient",)),
    (r"\bbegan\b", ("started",)),
    (r"\bnow\b", ("currently", "at present")),
    (r"\bdoes not\b", ("doesn't",)),
    (r"\bdoesn't\b", ("does not",)),
    (r"\bdid not\b", ("didn't",)),
    (r"\bdidn't\b", ("did not",)),
    (r"\bis not\b", ("isn't",)),
    (r"\bisn't\b", ("is not",)),
    (r"\bcannot\b", ("can't",)),
    (r"\bcan't\b", ("cannot",)),
    (r"\bwould like\b", ("wants",)),
    (r"\btimes as many\b", ("times the number of",)),
    (r"\btimes as much\b", ("times the amount of",)),
    (r"\balready\b", ("by now",)),
)

# Subordinate openers whose leading clause may move behind the main clause ("After X, Y." -> "Y after X.").
CLAUSE_OPENERS = (
    "after", "before", "when", "while", "since", "because", "although", "once", "during", "in", "on", "at",
    "for", "over", "every", "each", "if", "by", "last", "this", "next", "on average", "to",
)

# Lead-ins that introduce the facts once the question has been moved to the front.
FACT_INTROS: tuple[str, ...] = (
    "Here is what is known.", "Use these facts.", "Consider the following situation.", "The details are below.",
)

# Common first names in math word problems, by the pronoun the problem is likely to use.
FEMALE = (
    "Janet", "Mary", "Sarah", "Emily", "Jessica", "Anna", "Emma", "Olivia", "Sophia", "Mia", "Ava", "Lily", "Grace",
    "Chloe", "Julia", "Kate", "Lucy", "Nina", "Rachel", "Laura", "Linda", "Susan", "Nancy", "Karen", "Lisa",
    "Amy", "Jane", "Alice", "Ella", "Zoe", "Hannah", "Isabella", "Samantha", "Carla", "Maria", "Rose", "Betty",
    "Helen", "Claire", "Julie", "Megan", "Paula", "Tina", "Wendy", "Marie", "Sandra", "Ruth", "Diana", "Anne",
    "Kelly", "Amanda", "Melissa", "Jenny", "Ann", "Cindy", "Erin", "Brenda", "Tracy", "Rebecca", "Michelle",
)
MALE = (
    "John", "James", "Tom", "Mark", "Michael", "David", "Robert", "Peter", "Paul", "Jack", "Ben", "Sam", "Mike",
    "Joe", "Tim", "Dan", "Bob", "Carl", "Eric", "Frank", "George", "Henry", "Kevin", "Luke", "Matt", "Nick",
    "Oliver", "Ryan", "Steve", "William", "Brian", "Jason", "Josh", "Adam", "Alex", "Andrew", "Billy", "Charlie",
    "Chris", "Greg", "Jim", "Jeff", "Kyle", "Leo", "Noah", "Ethan", "Liam", "Lucas", "Max", "Owen", "Raymond",
    "Tony", "Carlos", "Gary", "Jerry", "Scott", "Bill", "Harry", "Jake", "Marcus",
)

# Relatives that make "he"/"she" ambiguous: with one of these in the text, pronouns are left alone.
OTHER_MALE = r"\b(?:brother|father|son|husband|boyfriend|uncle|man|boy|dad|grandfather|grandpa|nephew|" \
    r"king|mr|sir|gentleman|guy|cousin|friend|teacher|coach|boss|neighbor|neighbour)\b"
OTHER_FEMALE = r"\b(?:sister|mother|daughter|wife|girlfriend|aunt|woman|girl|mom|mum|grandmother|" \
    r"grandma|niece|queen|mrs|ms|lady|cousin|friend|teacher|coach|boss|neighbor|neighbour)\b"

# A fact sentence opening like this leans on the one before it, so the setup sentence is not moved.
DEPENDENT_START = r"^(?:he|she|they|it|his|her|their|its|this|that|these|those|then|after|later|next|finally|" \
    r"afterwards|now|also|however|but|so|the next|the other|the rest|the remaining|each|every|there|in addition)\b"

# Capitalised words that are not people (checked in lower case).
STOP_CAPS = frozenset("""
the a an if how what which who when where why after before in on at each every there it he she they his her
their this that then for of to and but so since while mr mrs ms dr grandma grandpa aunt uncle calculate find
determine also some all one two three four five six seven eight nine ten last next first second third monday
tuesday wednesday thursday friday saturday sunday january february march april may june july august september
october november december christmas halloween easter thanksgiving american english spanish french earth
during from with by as its our your you we not no yes lake mount river street school park store mall city
company farm zoo grand new north south east west valentine black friday internet math science history
""".split())
