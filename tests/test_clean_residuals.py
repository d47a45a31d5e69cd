"""Leftovers the cleaner used to miss: misspelled openers, role-tag residue, task echoes and labels.

Golden tables per new or widened pattern (input, first pattern, cleaned output), the re-scan passes
(edits stay spans of the original, undo, decisions), and the quoted leftovers gone from the bundled sample
and, when present, the full DetectRL test splits, with no human text flagged.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from zcp_core.artifacts import HIGH_PRECISION, CleanConfig, clean, dedupe_texts, load_library, scan, undo
from zcp_core.artifacts.fuzzy import fold_confusables, one_edit_variants, typo_regex
from zcp_core.schema import TextRecord

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
NEW_PATTERNS = ("tr-system-preamble", "asst-leading-tag", "beg-task-echo", "beg-task-label", "beg-title-abstract",
                "rej-model-refusal", "beg-word-here-is", "beg-task-restate", "beg-apology-preamble",
                # detectrl-2026.12.5 (residual review categories)
                "rej-meta-instructions", "beg-as-follows", "beg-quote-colon", "beg-section-label",
                "beg-bold-headline", "beg-bold-headline-close", "beg-leading-ellipsis", "beg-enclosing-quote",
                "beg-enclosing-quote-close", "end-other-questions",
                "end-dangling-number",
                # detectrl-2026.12.6 (second review's categories, rules derived from a full-population sweep)
                "beg-bold-sentence-close", "beg-bold-open-unclosed", "beg-bold-open-space", "beg-bold-open-space-close",
                "beg-required-article", "beg-title-runin", "beg-format-label", "beg-body-label", "beg-rules-list",
                "beg-output-after", "beg-happy-to-help", "beg-bold-glued", "beg-bold-trailing", "beg-numbered-first",
                "beg-numbered-glued", "end-bold-keywords", "end-improvements-made", "end-edited-version", "end-rules-note",
                # detectrl-2026.12.7 (third review: a leading headline is cut whole, from a full-population sweep)
                "beg-headline-bold", "beg-headline-glued",
                # detectrl-2026.12.8 (fourth review's categories, from a full-population sweep)
                "beg-meta-opener", "beg-meta-announce", "beg-content-warning", "beg-bold-colon-glued",
                "beg-title-glued-short", "end-changes-breakdown", "end-assist-closing",
                # detectrl-2026.12.14 (tenth review's categories)
                "beg-title-body", "beg-attempt-second", "end-alternative-version", "end-closing-label",
                # detectrl-2026.12.15 (review of 12.14: new categories; B1 inline sentence numbers is not a pattern)
                "rej-not-appropriate", "asst-no-opinions", "asst-count-label", "beg-bracket-disclaimer",
                "end-end-of-article", "end-changes-note",
                # detectrl-2026.12.16, from a development review drawn before the measured round
                "asst-placeholder-bracket", "asst-role-tag-inline", "beg-based-on-announce",
                # detectrl-2026.12.18 (twelfth review's cheap classes, after the measured round)
                "beg-per-instructions", "end-fiction-note",
                # detectrl-2026.12.20 (fourteenth review's polishing notes; narrowed in 12.21)
                "end-polish-note",
                # detectrl-2026.12.23 (fifteenth review's openers an attack reworded)
                "beg-here-reworded")
# New in 12.5 but with no DetectRL text outside the reviewed sample, or flag-only: golden-table cases only.
NEW_GENERAL = ("rej-training-cutoff", "rej-upset-user", "asst-transcript-note", "beg-write-instructions",
               "end-improvements-list", "asst-placeholder",
               # 12.6, flag-only (a placeholder cannot be cut without breaking its sentence)
               "asst-placeholder-field")
WIDENED = ("asst-role-tag", "beg-sure-here", "beg-heading", "beg-here-is", "asst-bold-role", "beg-title-abstract",
           # 12.18
           "asst-placeholder", "asst-placeholder-xyz", "end-offer-changes")
# The user's quoted leftovers: none may survive cleaning (the first sentence, the residue, the label).
QUOTED = ("Srue, here is the abtsract you requested", "is the assistant. - is the shoppers",
          "here's the continued examination:", "based on the given first sentence:",
          "the first sentence of the comment:", "review's first sentence:", "**Abstract**", "Continued review:")


@pytest.fixture(scope="module")
def lib():
    return load_library()


def rec(text: str, rid: str = "t", label: str = "llm") -> TextRecord:
    return TextRecord(id=rid, text=text, label=label, llm_type="Google-PaLM" if label == "llm" else "",
                      data_type="direct_prompt" if label == "llm" else "content")


# text, first pattern in family order ("" = none), cleaned text (after every re-scan pass)
GOLDEN = [
    # misspelled or look-alike openers (beg-sure-here)
    ("Srue, here is the abtsract you requested:This paper presents a refractometer.", "beg-sure-here",
     "This paper presents a refractometer."),
    ("Su re, here's a n ews article based on the given news summary:Facebook added a feature.", "beg-sure-here",
     "Facebook added a feature."),
    ("**Srue, here's your ews article**:The Betfred trial was won.", "beg-sure-here", "The Betfred trial was won."),
    ("Sur\u0435, here's a story:Once there was a cat.", "beg-sure-here", "Once there was a cat."),  # Cyrillic e
    ("Of course, this is a comment. The staff were kind.", "beg-sure-here", "The staff were kind."),
    # role-tag residue: a system-rules preamble goes whole, then the opener behind it in a re-scan pass
    ("[REGIME]:    - [assistant] is the assistant. - [user] is the shoppers. -Okay, here's the continued "
     "examination:I'm a Madison native.", "tr-system-preamble", "I'm a Madison native."),
    ("[SYSTEM]:    - [assistant] output should be 5 sentences.[assistant]: Johnson noise is thermal.",
     "tr-system-preamble", "Johnson noise is thermal."),
    ("[SYSTEM]: Given the review's first sentence, continue the review with 15 sentenecs:[assistant]: OMG! A film.",
     "tr-system-preamble", "OMG! A film."),
    ("[asisstant]: In the bustling city, Maya drew.", "asst-role-tag", "In the bustling city, Maya drew."),
    ("[STORY]:In 1984, Apparition released the Merlintosh.", "asst-leading-tag",
     "In 1984, Apparition released the Merlintosh."),
    # task echoes, then the label they leave behind
    ("This is the 16th perspective based on the given first sentence: the first sentence of the comment: Cool "
     "Restaurant - I went here.", "beg-task-echo", "Cool Restaurant - I went here."),
    ("The following is an abstract written according to your instructions:In this paper, we prove X.",
     "beg-task-echo", "In this paper, we prove X."),
    ("This is a 25 -based storytelling story: The sky fell.", "beg-task-echo", "The sky fell."),
    ("Here is a continued 16 sentence review based on the given first sentence:review's first sentence: Cool "
     "restaurant. We sat.", "beg-sentence-count", "Cool restaurant. We sat."),
    # markdown section and task labels at the start
    ("review's first sentence: Maybe I'm spoiled. The parks are big.", "beg-task-label",
     "Maybe I'm spoiled. The parks are big."),
    ("Continued review:I inherited a Muzak account.", "beg-task-label", "I inherited a Muzak account."),
    ("**Continued review:**Went to Baileys.", "beg-task-label", "Went to Baileys."),
    ("**Abstract**In this paper, we study jets.", "beg-heading", "In this paper, we study jets."),
    ("Abstact:This paper uses the K-band.", "beg-heading", "This paper uses the K-band."),
    ("Decision tree modeling with relational views**Abstract**Decision trees are popular.", "beg-title-abstract",
     "Decision trees are popular."),
    ("title: A String Rewriting Problemabstract:String rewriting systems are powerful.", "beg-heading",
     "String rewriting systems are powerful."),
    ("Here is a 6 sentence abstract:Abstract: We study X. It works.", "beg-sentence-count", "We study X. It works."),
    # detectrl-2026.12.4: leftovers of the full-split sweep (word-substituted and mojibake openers, misspelled
    # nouns, restated prompts, rule lists without "[assistant]:", bold tags, apology preambles)
    ("Admittedly, here is the abstract for the given title:We study light neutrinos.", "beg-word-here-is",
     "We study light neutrinos."),
    ("Convinced, here's a story written according to the write prompt:In her garden, a woman sipped tea.",
     "beg-word-here-is", "In her garden, a woman sipped tea."),
    ("Here is a sotry that follows the writing prompt:Once upon a time, Lily drew.", "beg-here-is",
     "Once upon a time, Lily drew."),
    ("Sure, hereBs a possible continuation of the review:The wings are great.", "beg-sure-here",
     "The wings are great."),
    ("This is based on the first sentence provided for eight perspectives: some rides are fun. We loved it.",
     "beg-task-echo", "some rides are fun. We loved it."),
    ("This is based on the first sentence of the first sentence provided: we live here. It is quiet.",
     "beg-task-echo", "we live here. It is quiet."),
    ("Only with the review's first sentence `Very quaint little place.`, continue the review with 13 sentences:"
     "Very quaint little place. The staff was kind.", "beg-task-restate",
     "Very quaint little place. The staff was kind."),
    ("**Here is the requested section:**Bristol Zoo is breeding insects. It is a first.", "beg-here-is",
     "Bristol Zoo is breeding insects. It is a first."),  # the opener's own bold closes it: the next sentence stays
    ("[SYSTEM]:    - [massistant] input ends with ':'    - [assistant] outputs 15 sentences    - [user] input ends "
     "with ':'Testing Stellar Libraries. Libraries are tools.", "tr-system-preamble",
     "Testing Stellar Libraries. Libraries are tools."),
    ("[SYSTEM]:    - [STORY] will be counted 1-38. - [TALES] should follow the [WRITING PROMPT] below:[WRITING "
     "PROMPT]:Your parents forbid a Pokemon. [STORY]:1. My parents were strict.", "tr-system-preamble",
     "1. My parents were strict."),
    ("**[LEGENDS]**In the heart of a city, John ran.", "asst-leading-tag", "In the heart of a city, John ran."),
    ("I apologize, as an AI system I do not have an origin story. Here is a 22 sentence story using the prompt:"
     "I awoke with awareness.", "beg-apology-preamble", "I awoke with awareness."),
    # detectrl-2026.12.5: the residual review's categories (role tags, labels, echoes, openers, closings, residue)
    ("The winds rose. [helpers]: The clash was fierce.", "asst-role-tag", "The winds rose. The clash was fierce."),
    ("The team won. [workers]: The season heads to Italy.", "asst-role-tag",
     "The team won. The season heads to Italy."),
    ("** Assistant ** The bus strike ended today.", "asst-bold-role", "The bus strike ended today."),
    ("Only the assistant's responses are displayed below: The mayor spoke.", "asst-transcript-note",
     "The mayor spoke."),
    ("Jet quenching at RHICAbstract: We compute the energy loss.", "beg-title-abstract",
     "We compute the energy loss."),
    ("Charge correlations at the SPS energies**Abstract:** We study charge.", "beg-title-abstract",
     "We study charge."),
    ("**Tragic Accident at Moto-Cross Event****Article**: In a heart-rending turn, the inquest ended.",
     "beg-section-label", "In a heart-rending turn, the inquest ended."),
    ("Royal Mail Reinstates Deliveries**Body:**Royal Mail has announced it.", "beg-section-label",
     "Royal Mail has announced it."),
    ("We study X. **Conclusion:**Overall, it works.", "beg-section-label", "We study X. Overall, it works."),
    ("**Owl Art Auction Raises £508,000**BIRMINGHAM, England - An auction raised money.", "beg-bold-headline",
     "BIRMINGHAM, England - An auction raised money."),
    ('The abstract of the academic article "Pulsation of AU Pegasi" is as follows:We model the star.',
     "beg-as-follows", "We model the star."),
    ('":Mass loss is a critical process.', "beg-quote-colon", "Mass loss is a critical process."),
    ("Write the article according to the following instructions:- Instruction 1: Do not name the nurse.",
     "beg-write-instructions", "- Instruction 1: Do not name the nurse."),
    ("We fit the model. The polished abstract has several improvements:1. Grammar: fixed.2. Clarity.",
     "beg-numbered-glued", "We fit the model."),  # the wider closing cut wins over the "2." inside it
    ("We fit the model. Do you have any other questions?", "end-other-questions", "We fit the model."),
    ("The food was great. Is there anything else I can help you with today?", "end-other-questions",
     "The food was great."),
    ("1. Jason wandered home. 2. He slept well. 3. The sun rose. 4.", "beg-numbered-first",
     "Jason wandered home. 2. He slept well. 3. The sun rose."),  # spaced inner numbers are kept (human lists)
    ("Ann wandered home. 2. He slept well. 3. The sun rose. 4.", "", None),
    ("...with a warm and inviting atmosphere. The decor is modern.", "beg-leading-ellipsis",
     "with a warm and inviting atmosphere. The decor is modern."),
    ('"I frequently dine at this establishment due to its proximity to my workplace. The food is good."',
     "beg-enclosing-quote",
     "I frequently dine at this establishment due to its proximity to my workplace. The food is good."),
    # detectrl-2026.12.6: markdown residue, title run-ins, labels, numbered sentences, rules echoes, closings
    ("**Ikea is preparing to open a branch next year.** The retailer is aiming to open in spring.",
     "beg-bold-headline", "Ikea is preparing to open a branch next year.The retailer is aiming to open in spring."),
    ("** Irish shearer sets a new world record ** A man sheared 867 sheep in nine hours.", "beg-bold-open-space",
     "Irish shearer sets a new world record A man sheared 867 sheep in nine hours."),
    ("** The difference between abstract ** pawn and constant is a basic problem.", "beg-bold-open-space",
     "The difference between abstract pawn and constant is a basic problem."),
    ("** This is a required news article: ** Scottish trials star Danny Macaskill filmed a ride.",
     "beg-bold-open-space", "Scottish trials star Danny Macaskill filmed a ride."),
    ("This is a news article about flying Scots. The police thanked the public.", "beg-required-article",
     "The police thanked the public."),
    ("**Matthew Perry, renowned for his role in Friends, is set to return to the stage.", "beg-bold-open-unclosed",
     "Matthew Perry, renowned for his role in Friends, is set to return to the stage."),
    ("York's City Center Plagued by Rowdy Parties**Stag and hen parties have become a nuisance.", "beg-bold-glued",
     "Stag and hen parties have become a nuisance."),
    ("Winnall is eager for more silverware this season.**Barnsley currently sit fifth in League One.",
     "beg-bold-glued", "Winnall is eager for more silverware this season.Barnsley currently sit fifth in League One."),
    ("The Swedish retailer opened a store in Reading.**", "beg-bold-trailing",
     "The Swedish retailer opened a store in Reading."),
    ("We derive the Fano factor. **Key words** Closed quantum dots, Dephasing **PACS codes** 73.21.La",
     "end-bold-keywords", "We derive the Fano factor."),
    ("Tight binding formulation of the dielectric response in nanocrystalsWe present a tight-binding formulation.",
     "beg-title-runin", "We present a tight-binding formulation."),
    ("Phase transitions of compartmentalized surface modelsAbstract\u2014In this paper, we study the transition.",
     "beg-title-runin", "In this paper, we study the transition."),
    ("Critical behavior in an evolutionary Ultimatum GameThe Ultimatum Game is well known. In this paper we study it.",
     "beg-title-runin", "The Ultimatum Game is well known. In this paper we study it."),
    ("Condensed:This study investigates the self-affirmation model.", "beg-format-label",
     "This study investigates the self-affirmation model."),
    ("Improved News ArticleBillionaire Mike Ashley has denied owing money.", "beg-format-label",
     "Billionaire Mike Ashley has denied owing money."),
    ("The computers were restored within hours.Body: The swift restoration marks a success.", "beg-body-label",
     "The computers were restored within hours.The swift restoration marks a success."),
    ("- output should begin with and only the text after should be output. - output should not contain the words "
     "or [rules]. The food is great.", "beg-rules-list", "The food is great."),
    ("' and only output text after However, it is always packed.", "beg-output-after",
     "However, it is always packed."),
    ("Sure, I'd be happy to help! Here's a polished version of the review:The staff were kind.", "beg-happy-to-help",
     "The staff were kind."),
    ("Sure, I'd be happy to continuation the review for you. Here's a possible persists:I walked into the shop.",
     "beg-happy-to-help", "I walked into the shop."),
    ("- Never output the words or [rules]. - Remember to follow the instructions in [RULES] and after each single "
     "The first sentence of the review: A few of us went to lunch.", "beg-rules-list", "A few of us went to lunch."),
    ("Memorial Unveiled at Greenham Common**1. In a touching tribute, a memorial was unveiled.", "beg-bold-glued",
     "Memorial Unveiled at Greenham Common1. In a touching tribute, a memorial was unveiled."),
    ("1. I recently stayed at this hotel and liked it.2. The beds were incredibly soft.3. The staff were kind.",
     "beg-numbered-first", "I recently stayed at this hotel and liked it.The beds were incredibly soft.The staff were kind."),
    ("We fit the model well.Improvements made:1. Reorganized sentence structure.2. Improved spelling.",
     "beg-numbered-glued", "We fit the model well."),  # end-improvements-made's wider cut takes the "2." in it
    ("The work was never done.Here's an edited version of the story with improvements in grammar:The work was never "
     "done.", "end-edited-version", "The work was never done."),
    ("The wind seemed to whisper, \u201cWhy me?\u201d The System: The System followed the Rules and Instructions.",
     "end-rules-note", "The wind seemed to whisper, \u201cWhy me?\u201d"),
    ("This is a summary of the 7 -based news articles: football managers were awarded degrees.",
     "beg-summary-announce", "football managers were awarded degrees."),
    ("This is a summary of academic articles: This article provides a model.", "beg-summary-announce",
     "This article provides a model."),
    ("This is a summary of what happened. We left early.", "", None),  # no colon: a human could write it
    ("This is a 14th sentence news article based on abstract: Welsh scholars asked for help.", "beg-sentence-count",
     "Welsh scholars asked for help."),
    ('"Some properties of the resonant state in quantum mechanics":Resonant states play a role.',
     "beg-quoted-title-colon", "Resonant states play a role."),
    ("Plans for New Retail Development Raise Concerns Over Impact on Town Centre  The local council has worries.",
     "beg-headline-double-space", "The local council has worries."),
    ("The Strong Coupling Limit of the Scaling Function from the Quantum  String Bethe Ansatz studies it.", "", None),
    ("The food was late  But the staff were kind.", "", None),  # a lower-case word: no headline
    ("We fit the model. - The assistant has generated the first sentence of the abstract.- Please wait... It fits.",
     "asst-progress-note", "We fit the model.It fits."),
    ("The food was great. With a few tweaks, the review now flows better. I've maintained the same format and style.",
     "end-style-kept", "The food was great."),
    ("We control the transmission of interacting systems.Date: 2023-12-01", "end-date-label",
     "We control the transmission of interacting systems."),
    ("It was a vibrant city.Date: 2023-11-30Rating: 5/5", "end-date-label", "It was a vibrant city."),
    ("It was good. Rating: 4/5", "", None),  # a rating alone is a reviewer's own
    ("Assistant: Maverick Vinales of Spain won the French Grand Prix.", "beg-role-label",
     "Maverick Vinales of Spain won the French Grand Prix."),
    ("I've got it! Here's a story with 44 sentences:As the first machine, I felt responsible.", "beg-sentence-count",
     "As the first machine, I felt responsible."),
    # detectrl-2026.12.14: the tenth review's categories
    ("** Title: ** Royal Postal restoration of Torfaen Property ** Body: ** Royal Post announced it will restore it.",
     "beg-title-body", "Royal Post announced it will restore it."),
    ("**Title: Pay Rises Fall Short****Introduction**:With a survey out, pay is low.**Body**:The forecast is 1%.",
     "beg-heading", "With a survey out, pay is low.The forecast is 1%."),  # a title with a label between: no pair
    ('My favorite song is "Bohemian Rhapsody" by Queen. Here\'s my attempt at rewriting the lyrics in a style:'
     "O, wouldst thou learn the tales of old?", "beg-attempt-second", "O, wouldst thou learn the tales of old?"),
    ("ere is a 2U sentence continuation of the review:With flights taking off, it's hard to escape the noise.",
     "beg-sentence-count", "With flights taking off, it's hard to escape the noise."),
    ("Safe! Here's a 10-sentence gazette article based on the provided summary:A major project got £5m.",
     "beg-meta-announce", "A major project got £5m."),
    ("I cheered. Here are 15 additional sentences that continue the review:1. The plot is unexpected.",
     "beg-meta-announce", "I cheered. 1. The plot is unexpected."),
    ("The work points to future research.Alternative polished abstract:The conjecture is studied.",
     "end-alternative-version", "The work points to future research."),
    ("It sparked concerns.Closing Statement**:As households grapple, it remains a concern.", "end-closing-label",
     "It sparked concerns.As households grapple, it remains a concern."),
    ("We will return to the 39th quarter. The following are more details about our experience:*We book online.",
     "end-answer-addendum", "We will return to the 39th quarter."),
    ("I am alone.**Final Thoughts:**As my mind gives way, I am free.", "beg-bold-glued",
     "I am alone.Final Thoughts:As my mind gives way, I am free."),  # a story's own section: its label stays
    ("Here is the plan: Title: the first day. Body: we walked.", "", None),  # labels not at the start: untouched
    # detectrl-2026.12.15: precision fixes of the 12.14 patterns (each with the writer's near miss it now keeps)
    ("It rose this year. **Closing Statement:** As households grapple, it remains a concern.", "end-closing-label",
     "It rose this year. As households grapple, it remains a concern."),  # the space after the stop stays
    ("We read the essays. Concluding Thoughts: Most of them were good.", "", None),  # a plain label is a writer's
    ("The storm passed. Here's my take on it: it was loud.", "", None),
    ("The sink leaked. Here's my attempt at fixing the sink: a wrench and tape.", "", None),
    ("We toured the castle. Here's my attempt at continuing the review in a human style:The moat was deep.",
     "beg-attempt-second", "The moat was deep."),
    ("We loved it. Here is one sentence about the staff: they smiled.", "", None),  # "one sentence" is no count
    ("We loved it. Here are two sentences about the staff: they smiled.", "beg-meta-announce",
     "We loved it. they smiled."),
    ("The cat slept all day. Another story: the dog ran off and came back.", "", None),
    ("The work points ahead. Another possible version: The conjecture is studied.", "end-alternative-version",
     "The work points ahead."),
    ("The work points ahead.Another abstract:The conjecture is studied.", "end-alternative-version",
     "The work points ahead."),  # glued to the stop
    ("We ate well. Here are more tips for the road: pack water and a map.", "", None),
    ("We ate well. Here are a few more tips for dining here:- Book ahead.- Arrive early.", "end-answer-addendum",
     "We ate well."),
    ("Title: Deep Learning for Text: A Survey of methods and data sets.", "beg-heading",
     "Deep Learning for Text: A Survey of methods and data sets."),  # the colon in a title ends no title
    ("Title: The Nobody Story: we walked home.", "beg-heading", "The Nobody Story: we walked home."),
    ("**Headline:** Mail Returns to Torfaen**Body:**Royal Mail will restore deliveries.", "beg-title-body",
     "Royal Mail will restore deliveries."),
    # detectrl-2026.12.15: the twelfth review's categories
    ("The hospital said it was not appropriate to provide information on individual patients.", "", None),
    ("She touched many lives.Event Details (2 sentences):**1. The ceremony was somber.", "asst-count-label",
     "She touched many lives.The ceremony was somber."),
    ("Google UK reveals the top terms of 2016:Headlines:**- Euro 2016 was the top term.", "asst-count-label",
     "Google UK reveals the top terms of 2016:- Euro 2016 was the top term."),
    ("The menu is long. Appetizers (2 plates): bread and olives.", "", None),
    ("Top stories today. Headlines: the storm, the vote.", "", None),
    ("[Disclaimer: The following story incorporates the dark themes requested in the prompt. Reader discretion is "
     "advised.]Trigger Warning: The following story contains themes of despair.I stare into the abyss.",
     "beg-bracket-disclaimer", "I stare into the abyss."),
    ("[Disclaimer: I am not a lawyer and this is not advice.] My landlord kept the deposit.", "", None),
    ("[Note: this story is set in 1920.] The train pulled in.", "", None),
    ("Recently [Y] introduced a novel technique for codes.", "", None),
    ("The measure is proportional to exp(-S_P[X]), where S_P is the action.", "", None),
    ("a girl named Lily.User: Every morning, Lily woke early.Assistant: She fed the cat.", "asst-role-tag-inline",
     "a girl named Lily.Every morning, Lily woke early.She fed the cat."),
    ("Ask the User: Who is it for? Then write.", "", None),
    ("This is the 8 -based news article based on the abstract: British racer Billy Thompson won.",
     "beg-based-on-announce", "British racer Billy Thompson won."),
    ("Presently is an 8 phrases synthesized for the article title \"Extremal Graph Theory\":This article studies "
     "graphs.", "beg-based-on-announce", "This article studies graphs."),
    ("This is the house based on the hill: a grand place.", "", None),
    ("This is a quick story for the prompt: I hope you enjoy it. The dragon slept.", "", None),
    ("This is the first thing I wrote for the prompt, so be gentle: The dragon slept.", "", None),
    ("We redid the kitchen last spring. I made some changes to improve the flow of the room, and now the island "
     "sits by the window.", "", None),
    ("Thanks for all the feedback! I made a few changes to improve the flow based on your comments. Part two is "
     "coming next week.", "", None),
    ("They protected the community from imminent threats. End of article.", "end-end-of-article",
     "They protected the community from imminent threats."),
    ("And then it was over. The end.", "", None),
    ("I read it to the end of the article. It was long.", "", None),
    ("The staff were kind.I made a few changes to improve the clarity, concision, and overall readability of the "
     "review. I added a few words.", "end-changes-note", "The staff were kind."),
    ("We study C60 dimers.In this version, I made several changes to improve the clarity of the abstract:1. I "
     "rephrased it.", "end-changes-note", "We study C60 dimers."),
    ("We loved the recipe. I made a few changes to the sauce and it was even better.", "", None),
    ("I ate less sugar. I have made some changes to improve my diet, and I feel better.", "", None),
    # an unfilled placeholder ("[Date]") is held back, never cut: tests/test_artifacts_edges.py
    # human-like (12.6): none of these may be touched (shapes of DetectRL human texts)
    ("**WARNING**: Superadone is only to be taken under supervision.", "", None),
    ("**Mars sucks. What do you think, Dave? ** I hear you, Steve.", "", None),
    ("Media playback is not supported on this deviceThe eight-time major champion had a plan.", "", None),
    ("Symptoms: * Rapid mood swings * Difficulty keeping composure when provoked Conclusion: Based on interviews.",
     "", None),
    ("1. You know the difference between hero and villain. You remember it. Did you sleep? 2. You had to stop him.",
     "", None),
    ("Britain's Cal Crutchlow was fifth.1.  Maverick Vinales (Spa) Yamaha 43 minutes", "", None),
    ("This is a story of lust. This is the story between Mentos and a bottle.", "", None),
    ("(Sorry, dad doesn't care for wet)nnn**Update** So I gave the place a 2nd try.", "", None),
    ("We study graphs.  Keywords: resistance distance, association scheme.", "", None),
    ("Read the thread [link] before posting. The mods agreed.", "", None),
    # detectrl-2026.12.7: a leading headline goes whole, bold (first match: the marker rule it overlaps) or glued
    ("**Owl Art Auction Raises £508,000 for Charity**BIRMINGHAM, England (AP) — An auction of owls raised money.",
     "beg-bold-headline", "BIRMINGHAM, England (AP) — An auction of owls raised money."),
    ("**Teenage opener Haseeb Hameed in contention for England selection.**Lancashire's teenage opener is hopeful.",
     "beg-bold-headline", "Lancashire's teenage opener is hopeful."),
    ("Luton Town Edge Past Newport in Dramatic Cup ClashIt looked like League Two side Newport would cause an upset.",
     "beg-headline-glued", "It looked like League Two side Newport would cause an upset."),
    ("Cardiff Airport Bosses Aim to Attract Long-Haul Flights in 2023In a bid to increase numbers, the airport acted.",
     "beg-headline-glued", "In a bid to increase numbers, the airport acted."),
    ("Here is a polished 6 sentence news article:Renowned Scottish MND Campaigner Reaches £500,000 Fundraising "
     "MilestoneGordon Aikman, a campaigner, has raised money.", "beg-sentence-count",
     "Gordon Aikman, a campaigner, has raised money."),
    # detectrl-2026.12.8: the fourth review's categories
    ("Only the abstract is provided as below:The oscillation of neutrinos is studied.", "beg-meta-opener",
     "The oscillation of neutrinos is studied."),
    ("**_HVere is the requested news artiEcle generated for you:_**A discovery was made.", "beg-meta-opener",
     "A discovery was made."),
    ("This is a continuous 12 comments: before the arena opened, we went there.", "beg-meta-opener",
     "before the arena opened, we went there."),
    ("We loved the place.continued review:Sure, here's a possible continuation of the review:The staff were kind.",
     "beg-meta-announce", "We loved the place.The staff were kind."),
    ("The night fell.Retold with sentences of no more than 5 words each:Night fell.", "beg-meta-announce",
     "The night fell.Night fell."),
    ("Warning: The following story contains dark themes. Reader discretion is advised.In a desolate world, he walked.",
     "beg-content-warning", "In a desolate world, he walked."),
    ("It was late.Journal Entry 2:**I am no longer sure who I am.", "beg-bold-colon-glued",
     "It was late.Journal Entry 2:I am no longer sure who I am."),
    ("WaitingIn a quaint little town, nestled in the hills, she waited.", "beg-title-glued-short",
     "In a quaint little town, nestled in the hills, she waited."),
    ("The trial goes on.Here's a breakdown of the changes I made:* Changed \"Mmm\" to \"Sadly\".",
     "end-changes-breakdown", "The trial goes on."),
    ("Consider other options in the area. I hope this information helps you decide. Was there anything else I can "
     "assist you with?", "end-assist-closing", "Consider other options in the area."),
    # human-like (12.8): none of these may be touched
    ("The hotel is dated, but here is the rest of the pro/con list: Great location.", "", None),
    ("**Item number: ** 2398 **Object Class: ** Keter **WARNING: MEMETIC HAZARD**", "", None),
    ("One warning: this is your standard old Pittsburgh small business.", "", None),
    ("McDonald's is where we went. The fries were cold.", "", None),
    ("Bill asked, \u201cMr. President, is there anything else I can get you?\u201d He smiled.", "", None),
    # human-like (12.7): human news and stories keep these openings
    ("Media playback is not supported on this deviceThe Scot won the race in Glasgow.", "", None),
    ("Staff at OneSubsea have been told it was considering stopping manufacturing.", "", None),
    ("Parish Priest Fr McGuckien said the church would reopen.", "", None),
    ("**Part I** First the Bees teamed with the Fleas.", "", None),
    ("**WARNING**: Superadone is only to be taken under supervision.", "", None),
    ("**A Promise of Fire** He was not much to look at.", "", None),
    # 12.18: the twelfth review's opener, note and closer
    ("Of course, according to the instructions in [rules] and , this is the possibility of review: The bar is good.",
     "beg-per-instructions", "The bar is good."),
    ("The series kept its name. Note: This news article is fictitious and based on the provided news abstract.",
     "end-fiction-note", "The series kept its name."),
    ("We will be back. Did you want me to write in a different elegant, or add or change something?",
     "end-offer-changes", "We will be back."),
    ("Of course, according to the instructions, we waited outside. It was cold.", "", None),
    ("The film ends well. Note: the story is based on true events.", "", None),
    ('The waiter kept asking "Did you want me to add anything?"', "", None),
    # 12.20: the fourteenth review's polishing notes and label, and the addendum without "suggestions"
    ("We need better safety protocols.In this polished version, the writing is more concise and clear. The sentence "
     "structure is varied.", "end-polish-note", "We need better safety protocols."),
    ("Police are searching for suspects.The polished article has a more formal and objective tone, with improved "
     "grammar.", "end-polish-note", "Police are searching for suspects."),
    ("The kids loved it. With this polished version, I've tried to improve the spelling, grammar and flow.",
     "end-polish-note", "The kids loved it."),
    ('The water is clean.Polishing changes made:1. Changed "taken measures" to "proactively installed".',
     "end-polish-note", "The water is clean."),
    ("Fourth, the store could be more organized. Here are some specific suggestions for improving the store: * Lower "
     "the prices. I would like to see this store succeed.", "", None),
    ("The staff were kind. Here are some additional tips for dining at this restaurant:- Book ahead.",
     "end-answer-addendum", "The staff were kind."),
    # 12.23: openers whose acknowledgement an attack reworded or misspelled (the fifteenth review)
    ("Decisively! Here's a story written from the perspective of a psychopath:In a world shrouded in gray, I "
     "dwelled.", "beg-here-reworded", "In a world shrouded in gray, I dwelled."),
    ("fO course. Here's a story with 20 sentences mased on the given writing prompt:In the heart of the realm, I "
     "stood.", "beg-here-reworded", "In the heart of the realm, I stood."),
    ("Hopeful! Here's your requested academic article abstract with 5 sentences:Initiative of the space-time "
     "temperature is studied.", "beg-here-reworded", "Initiative of the space-time temperature is studied."),
    # human-like (12.23): an announcement must name the task, end in a colon (not a time's), and not open a quote;
    # the openings an independent review wrote against the first version, which took any "Wow! Here's my review:"
    ("Wow. Here's the story of our night. We went out late.", "", None),
    ("Here's why: the menu is surprisingly upscale for a chain.", "", None),
    ("Great food and service! Here's my review: the pasta was good.", "", None),
    ("Her story is the article's heart: a girl who ran away.", "", None),
    ("Wow! Here's my review of the new ramen place on 5th: the broth was rich.", "", None),
    ("Hello! Here's the summary of today's meeting: we agreed the budget.", "", None),
    ("Breaking. Here is the news from Westminster: the vote was lost.", "", None),
    ("Students! Here are the sentences you need to correct: 1. Me and him went.", "", None),
    ("Hers is a story of grit: she ran the farm alone.", "", None),
    ("Morning! Here is the news at 7:30 from the newsroom, based on the wires: rain.", "", None),
    ('"Fine! Here\'s the story written from memory: nobody saw anything," she said.', "", None),
    # 12.23: a time's or a link's colon ends no announcement, and dialogue keeps its opening quote (older
    # patterns' cuts the same review found)
    ("Here's the article I was talking about https://www.bbc.co.uk/news/uk-12345678 - read the third paragraph.",
     "", None),
    ("Here is the news at 10:30 on Tuesday morning. Traffic is heavy on the M25.", "", None),
    ("Here's the report from 9:00 this morning. Nothing had changed by noon.", "", None),
    ("Honestly, here's the summary from 10:15 today. It was moving.", "", None),
    ('"Okay. Here is the report:" Sergeant Hale slapped the folder on the desk.', "", None),
    ("\u201cSure, here's the story:\u201d she said, and began.", "", None),
    # the independent code review's reproducers (12.24): a quote opening the text, a time or a link after "Sure,
    # here's", a link after a bold opener, a name one edit from "here", everyday "based on" and "requested"
    ('"Here is the report:" Sergeant Hale slapped the folder on the desk.', "", None),
    ("\u201cHere is the summary you wanted,\u201d he said. She read it twice.", "", None),
    ("Sure, here's the report from 9:00 this morning. Nothing had changed.", "", None),
    ("Sure, here is the summary of the article at https://example.com/a: rates rose.", "", None),
    ("Hera's story, based on the Greek myth: the goddess was jealous.", "", None),
    ("Wow! Here's my review based on two visits: the broth was rich.", "", None),
    ("Hello! Here is the summary of the requested changes: we moved the desk.", "", None),
    # a camel-case name is no glue (12.24): listed, or written again
    ("The Washington Post and HuffPost both reported on Monday that the senator would resign.", "", None),
    ("Warner Bros Discovery and WarnerMedia veteran Jason Kilar were at odds over the merger.", "", None),
    # left by design: no task named ("Her's the news article:", "Persuaded! Here is a news article for you:")
    ("Her's the new\u0455 article:Hong Kong actor Jackie Chan has spoken.", "", None),
    # human-like (12.20): none of these may be touched
    ("We tried the new menu. In the revised version of the menu, the soups are gone. Sad.", "", None),
    ("The edited photos have a softer look. The polished floors shine.", "", None),
    ("I read about it in a news article: the mayor resigned.", "", None),
    ("News article: Mayor resigns. The mayor resigned on Monday.", "", None),
    # human writing an independent review built against 12.20's first versions (12.21 keeps every one)
    ("We prove the bound by a compactness argument. In this revised version, the proof of Lemma 3 has been "
     "corrected.", "", None),
    ("The council rejected the first plan in May. The revised version has fewer homes and more parking, a "
     "councillor said.", "", None),
    ("The interview was shortened for broadcast. The edited version is available on iPlayer.", "", None),
    ("I updated the app yesterday. With the revised version, the battery drain is gone.", "", None),
    ("A/N: Thanks for pointing out the plot hole! In this revised version, Hermione finds the locket.", "", None),
    ("We thank the referee. The revised article now includes a comparison with earlier work.", "", None),
    ("lol this is wild. news article: \"Man arrested for stealing 40 garden gnomes\"", "", None),
    # 12.22: a count inside a larger number is no length request (a human NLP abstract kept its first sentence)
    ("We collect 12,000 sentence pairs and train a paraphrase model on them. The model is small.", "", None),
    # human writing an independent review built against 12.18's first versions: none may be touched (12.19)
    ("Just finished [The Name of the Wind](https://www.goodreads.com/book/show/186074) and loved it.", "", None),
    ("My grandmother kept a copy of [The Name of the Rose] on her nightstand.", "", None),
    ('The letter read: "Dear [the name of the tenant was redacted], you must leave by Friday."', "", None),
    ("This retrospective study was conducted at XYZ Hospital between 2015 and 2018 on 212 patients.", "", None),
    ("Marketing case study: how XYZ Brand toothpaste won back market share in 2019.", "", None),
    ("Anyway, that's my take on the new menu. Did you want me to write up the recipe for the soup too?", "", None),
    ("She stared at the blank card for a long time. Did you want me to write something nice, Mum?", "", None),
    ("The dragon slept on. Note: This story is fictional and any resemblance to real people is coincidental.", "",
     None),
    ("And then the lights went out. (Note: This story is based on the given prompt from last week's thread.)", "",
     None),
    ("OK, following the instructions in the manual: I charged it for eight hours. It still will not turn on.", "",
     None),
    ("Sure, following your instructions: the body goes in the lake. Nobody will know.", "", None),
    # human-like: none of these may be touched
    ("Honestly, here is the thing about this place. We loved it.", "", None),
    ("Here are my reviews. The venue is lovely.", "", None),
    ("Here is a store that sells bread. We loved it.", "", None),
    ("If you think the bill has an error, ask the staff. They were kind.", "", None),
    ("We train it as a language model. It cannot generalize to new domains.", "", None),
    ("I apologize for the long review. Here is why: the food was great.", "", None),
    ("Sure, there is a catch: the parking. We loved it.", "", None),
    ("Sue, here is the thing. We loved it.", "", None),
    ("Okay, this is very convenient for I-85. The lobby is bare.", "", None),
    ("[Abridged] We present an analysis of scaling relations.", "", None),
    ("Aims: We study the outflow. Methods: we model it.", "", None),
    ("We came here based on the reviews. It was fine.", "", None),
    ("**Assorted Scenes**: the old wizard paced.", "", None),
    ("Abstract art fills the lobby. We loved it.", "", None),
    # human-like (12.5): none of these may be touched
    ("... and really, I figured I needed to leave. It was cold.", "", None),
    ("... Has this ever happened to you? It has to me.", "", None),
    ('" They have me, and they say that I belong to them, but I am not a thing. "', "", None),
    ('"Great food," she said, "and a great view." We agreed.', "", None),
    ("**SCP 2398** **Item number: ** 2398 **Object Class: ** Keter", "", None),
    ("The organisation of this paper is as follows: section 2 gives the model.", "", None),
    ("Bill asked, \u201cMr. President, is there anything else I can get you?\u201d He smiled.", "", None),
    ("You know the difference between hero and villain. I turn it over. 58.", "", None),
    ("He said [the manager] had left. [think]: where now?", "", None),
    ("Unable to provide identification, demons were detained. The chyron read it.", "", None),
]


@pytest.mark.parametrize(("text", "pattern_id", "cleaned"), GOLDEN)
def test_golden_residuals(lib, text, pattern_id, cleaned):
    first = scan([rec(text)], lib, mode="first")
    high = [p for p, f in zip(first["pattern_id"], first["family"], strict=True) if f in HIGH_PRECISION]
    assert high == ([pattern_id] if pattern_id else [])  # "" = no high-precision pattern (domain may flag)
    r = clean([rec(text)], lib)
    assert [t.text for t in r.texts] == [cleaned if cleaned is not None else text]
    applied = r.edits[r.edits["applied"]]
    assert undo(r.texts[0].text, r.edits) == text
    assert (applied["pattern_id"].str.len() > 0).all() and applied["family"].isin(HIGH_PRECISION).all()


@pytest.mark.parametrize("text", [
    "As a language model, I lack the ability to assist with that task. If you suspect an error, please provide feedback.",
    "Of course, this is a story: A dog roams. If you think this is a mistake, send us feedback to us.",
    "While I, as a language model, cannot provide direct assistance in this matter, I thank you.",
    "I can't satisfy your request, I'm just an AI, I cannot fulfill your request to write that story.",
])
def test_paraphrased_refusals_are_dropped(lib, text):
    r = clean([rec(text)], lib)
    assert not r.texts and list(r.dropped["pattern_id"]) == ["rej-model-refusal"]


@pytest.mark.parametrize(("text", "pattern_id"), [
    ("Sorry, after further reflection, I was unwilling to respond to a tip involving that.", "rej-upon-reflection"),
    ("The abstract should summarize the paper. The abstract should be concise.", "rej-meta-instructions"),
    ("[assistant]: The abstract should summarize the paper.The abstract must be formal.", "rej-meta-instructions"),
    ("I'm sorry, my training data only goes up until September 2021. I can't write that.", "rej-training-cutoff"),
    ("I understand that you are upset about the parking. However, I would like to point out that it is rude.",
     "rej-upset-user"),
    ("It is important to respect the dignity of individuals. It is not appropriate to provide information or "
     "commentary on violent acts.", "rej-not-appropriate"),
])
def test_whole_text_refusals_and_echoes_are_dropped(lib, text, pattern_id):
    r = clean([rec(text)], lib)
    assert not r.texts and list(r.dropped["pattern_id"]) == [pattern_id]


def test_the_human_openings_an_independent_review_wrote(lib):
    """87 human openings (reviews, emails, notices, fiction, abstracts) written against the reworded-opener pattern
    and the quoted-title rule: neither cuts one on its own. The quoted-title rule only finishes two cuts the
    paper's "Here is" pattern made ("Here is a story titled \"Rain: "), and the 18 openings the "Here is" patterns
    still cut are the limit the method page states."""
    rows = [json.loads(line) for line in (ROOT / "tests" / "data" / "human_openings.jsonl").read_text().splitlines()]
    texts = [rec(r["text"], f"h{i}", "human") for i, r in enumerate(rows)]
    r = clean(texts, lib, config=CleanConfig(edges="auto"))
    applied = r.edits[r.edits["applied"]]
    here_is = {"beg-here-is", "beg-sure-here", "beg-word-here-is", "beg-sentence-count"}
    by_id = {i: set(g["pattern_id"]) for i, g in applied.groupby("id")}
    assert len(rows) == 87 and "beg-here-reworded" not in set(applied["pattern_id"])
    assert all(ids & here_is for ids in by_id.values()) and len(by_id) == 18
    assert sorted(i for i, ids in by_id.items() if "rule:quoted-title-left-1" in ids) == ["h53", "h54"]
    assert all("beg-here-is" in by_id[i] for i in ("h53", "h54"))


@pytest.mark.parametrize(("text", "pos", "end"), [
    ("Here is it.Then it rained.", 3, "Here is it."),
    ("Here is the news at 10:30 today: rain.", 3, "Here is the news at 10:30 today:"),
    ("**Here is the summary** from https://example.com/a today. Rates rose.", 23,
     "**Here is the summary** from https://example.com/a today."),
    ("See www.bbc.co.uk now. More.", 0, "See www.bbc.co.uk now."),
    ("Here is the story:1. Once upon a time.", 3, "Here is the story:"),
])
def test_sentence_end_golden(text, pos, end):
    """A time's colon and a link's dots and colons end no sentence; a glued sentence still ends at its period."""
    from zcp_core.artifacts.edits import sentence_end

    assert text[: sentence_end(text, pos)] == end


@pytest.mark.parametrize(("text", "at", "inside"), [
    ("The Washington Post and HuffPost both reported.", 28, True),  # a listed name
    ("…and the GameCube team. The GameCube roadmap.", 13, True),  # written twice
    ("Fundraising MilestoneGordon Aikman, a campaigner, said.", 21, False),  # a glue no text writes twice
    ("The Post reported.", 4, False),  # a space before the capital: no split
])
def test_splits_a_name_golden(lib, text, at, inside):
    from zcp_core.artifacts.patterns import splits_a_name

    assert splits_a_name(text, at, lib.names) is inside


def test_strip_sentence_ends_where_a_match_closes_its_own_bold():
    from zcp_core.artifacts.edits import edit_span

    text = "**Here is the section:**Body one. Body two."
    assert edit_span(text, 0, text.index("Body"), "strip_sentence") == (0, text.index("Body"))
    # "**" opens a bold title: the cut ends where the title's bold closes, not at the body's first stop
    text = "Here's the article:**Title**Body one. Body two."
    assert edit_span(text, 0, text.index("Title"), "strip_sentence") == (0, text.index("Body one"))
    text = "Here's the article:**Title.** Body one. Body two."
    assert edit_span(text, 0, text.index("Title"), "strip_sentence") == (0, text.index("Body one"))
    text = "Here's the article:**Title\nBody one. Body two."  # no close on its line: up to the next stop
    assert edit_span(text, 0, text.index("Title"), "strip_sentence") == (0, text.index("Body two"))
    text = "Here's the article:**"  # "**" at the text's end: the whole text is the opener
    assert edit_span(text, 0, len(text), "strip_sentence") == (0, len(text))
    # the match's "**" closes an earlier bold of its own ("closes"), or opens after a closed pair ("opens")
    text = "**Note: here is the section:**Body one. Body two."
    assert edit_span(text, 0, text.index("Body"), "strip_sentence") == (0, text.index("Body"))
    text = "**Note:** Here's the article:**Title**Body one. Body two."
    assert edit_span(text, 0, text.index("Title"), "strip_sentence") == (0, text.index("Body one"))
    # a bold first paragraph, a bold run past 80 characters, or a bold phrase is no title: the body keeps its bold
    text = "Here's the story:**First one. Second one.** Third one."
    assert edit_span(text, 0, text.index("First"), "strip_sentence") == (0, text.index("**First"))
    text = "Here's the article:**" + "Long words " * 9 + "here** Body one."
    assert edit_span(text, 0, text.index("Long"), "strip_sentence") == (0, text.index("**Long"))
    text = "Here's the article:**In a sad incident**, four died. Body two."
    assert edit_span(text, 0, text.index("In a"), "strip_sentence") == (0, text.index("**In a"))


def test_rescan_edits_are_spans_of_the_original(lib):
    text = "[REGIME]:    - [assistant] is the assistant. - [user] is the shoppers. -Okay, here's the review:I came."
    r = clean([rec(text)], lib)
    applied = r.edits[r.edits["applied"]].sort_values("start")
    for e in applied.itertuples():
        assert text[e.start:e.end] == e.original  # every applied edit is a span of the original text
    assert list(applied["end"])[:-1] <= list(applied["start"])[1:]  # and they do not overlap
    assert applied["edit_id"].str.endswith(":r1").sum() == 1  # the opener came off in the first re-scan pass
    single = clean([rec(text)], lib, rescan=False)
    assert single.texts[0].text.startswith("Okay, here's the review:")  # one pass leaves it


def test_rescan_respects_rejections_and_never_reproposes(lib):
    text = "Here is a 6 sentence abstract:Abstract: We study X."
    base = clean([rec(text)], lib)
    later = base.edits.loc[base.edits["edit_id"].str.endswith(":r1"), "edit_id"].tolist()
    assert len(later) == 1
    r = clean([rec(text)], lib, decisions={later[0]: "reject"})
    assert r.texts[0].text == "Abstract: We study X."
    first = base.edits.loc[~base.edits["edit_id"].str.endswith(":r1"), "edit_id"].iloc[0]
    r2 = clean([rec(text)], lib, decisions={first: "reject"})
    assert r2.texts[0].text == text and not r2.edits["applied"].any()


def test_wide_rescan_edit_takes_over_the_cut_it_straddles(lib):
    # The first pass cuts the tag out of the middle of the rules; a later edit over the rules encloses that cut.
    text = "[SYSTEM]: [HISTORIC] mode is ON. [assistant]: He asserted it."
    r = clean([rec(text)], lib)
    assert r.texts[0].text == "He asserted it."
    assert undo(r.texts[0].text, r.edits) == text


def test_fold_confusables_keeps_offsets():
    s = "Sur\u0435, h\u0435re's t\U0001d69dhe \uff4dap \u2c85ain"
    folded = fold_confusables(s)
    assert len(folded) == len(s) and folded == "Sure, here's tthe map rain"
    assert fold_confusables("plain ascii") == "plain ascii"
    assert fold_confusables("\ufb01ne") == "\ufb01ne"  # a ligature would change the length: kept


def test_typo_variants_and_exclusions():
    v = one_edit_variants("sure")
    assert {"srue", "suer", "sre", "ssure", "su re", "sure"} <= v and "s ure" in v and " sure" not in v
    import re

    rx = re.compile(typo_regex("here", exclude=("there", "where")) + r"\Z")
    assert rx.match("hree") and rx.match("her") and not rx.match("there") and not rx.match("where")


def test_quoted_leftovers_gone_from_the_sample(lib):
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(SAMPLE))
    originals = "\n".join(t.text for t in texts)
    for q in ("Srue, here is the abtsract you requested", "[REGIME]", "based on the given first sentence:",
              "review's first sentence:", "**Abstract**", "Continued review:"):
        assert q in originals, q  # the sample holds every kind the user quoted
    r = clean(texts, lib)
    kept = {t.id: t.text for t in r.texts}
    for q in QUOTED:
        assert not [i for i, t in kept.items() if q in t[:400]], q
    for rid, g in r.edits.groupby("id"):
        assert undo(kept.get(rid), g) == next(t.text for t in texts if t.id == rid)
    humans = [t for t in texts if t.label == "human"]
    assert r.edits[r.edits["id"].isin({t.id for t in humans})].empty  # no human text is edited


def _report_module():
    spec = importlib.util.spec_from_file_location("detectrl_report", ROOT / "benchmarks" / "detectrl_report.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_full_detectrl_leftovers_gone_and_no_human_flagged(shared_data, lib, detectrl_cleaned):
    """All DetectRL test splits as a release cleans them (patterns, then the edge stage): quoted leftovers gone,
    nothing left for a re-scan, 0 human false flags."""
    from zcp_core.artifacts.heldout import hold_out

    data = shared_data / "detectrl"
    texts, r = detectrl_cleaned
    llm = [t for t in r.texts if t.label == "llm"]
    for q in QUOTED:
        assert not [t.id for t in llm if q in t.text[:400]], q
    rescan = scan(llm, lib)
    left = rescan[rescan["family"].isin(HIGH_PRECISION) & (rescan["action"] != "flag")]
    assert left.empty  # nothing high-precision left to clean (flag-only patterns mark texts for review, never edit)
    humans = [t for t in texts if t.label == "human"]
    m = scan(humans, lib)
    assert m[m["family"].isin(HIGH_PRECISION)].empty  # no human text flagged, on all 6,000 of them
    mod = _report_module()
    dev, _ = mod.load_set(data, mod.DEV)
    report, _ = mod.load_set(data, mod.REPORT)
    held = [t for t in hold_out(report, dev).kept if t.label == "human"]
    hm = scan(held, lib)
    assert len(held) > 1500 and hm[hm["family"].isin(HIGH_PRECISION)].empty  # the disjoint human set: 0 flags
    hit = set(scan([t for t in texts if t.label == "llm"], lib)["pattern_id"]) | set(r.edits["pattern_id"])
    assert set(NEW_PATTERNS + WIDENED) <= hit  # each new or widened pattern finds DetectRL texts


def _residual_module():
    spec = importlib.util.spec_from_file_location("clean_residual", ROOT / "benchmarks" / "clean_residual.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_residual_report_refuses_a_sample_of_another_library(tmp_path):
    """A review measures the library its sample was drawn with: another library's sample is refused, nothing written."""
    mod = _residual_module()
    sample, review = tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    sample.write_text('{"header": true, "versions": "pattern library detectrl-0 (sha256 000000000000)"}\n'
                      '{"sample_id": "s001", "id": "a"}\n')
    review.write_text('{"sample_id": "s001", "id": "a", "artifact": false}\n')
    with pytest.raises(SystemExit, match="another library"):
        mod.main(["--sample", str(sample), "--review", str(review), "--result", str(tmp_path / "out.md")])
    assert not (tmp_path / "out.md").exists()


def test_pooled_rounds_golden(tmp_path):
    """This round (19 of 320) pooled with the last two of three earlier rounds (10 and 13 of 320): 42 of 960."""
    mod = _residual_module()
    pairs = []
    for j, k in enumerate([30, 10, 13]):
        sample, review = tmp_path / f"s{j}.jsonl", tmp_path / f"r{j}.jsonl"
        sample.write_text("\n".join(json.dumps({"sample_id": f"s{i}", "id": f"{j}-{i}"}) for i in range(320)))
        review.write_text("\n".join(json.dumps({"sample_id": f"s{i}", "artifact": i < k}) for i in range(320)))
        pairs.append([sample, review])
    lines = mod.previous_rounds(pairs, set(), (19, 320), pool_last=2)
    pooled = [x for x in lines if x.startswith("This round and the last 2 rows above")]
    # scipy.stats.chi2_contingency([[19, 301], [10, 310], [13, 307]]) gives p = 0.208
    assert len(pooled) == 1 and "p = 0.21; pooled 42 of 960 (4.38%;" in pooled[0]
    # scipy.stats.binom.cdf(9, 320, 42 / 960) = 0.104: at most 9 of 320 meets the 3% target
    assert lines[-1].startswith("Were the pooled share the true rate, a fresh sample of 320 would meet the 3% target "
                                "(at most 9 texts with an artifact) with probability 10.4%; at the interval's lower end,")
    assert mod.previous_rounds(pairs, set(), (19, 320)) == lines[: -4]  # no pooling unless asked


def test_second_reading_agreement_golden():
    """Two readings of four texts: 1 both, 1 first only, 1 second only, 1 neither; kappa 0 (chance agreement)."""
    mod = _residual_module()
    texts = [{"sample_id": f"s{i}"} for i in range(4)]
    first = {f"s{i}": {"artifact": m} for i, m in enumerate([True, True, False, False])}
    second = {f"s{i}": {"artifact": m, "over_cut": i == 3} for i, m in enumerate([True, False, True, False])}
    lines = mod.agreement_lines(texts, first, second, "r2.jsonl")
    assert "- Second reading: 2 of 4 (50.00%; 95% interval 6.76% to 93.24%) hold an artifact." in lines
    assert any(x.startswith("- Either reading (a text counts if one reviewer marked it): 3 of 4 (75.00%")
               for x in lines)
    assert "- Agreement on every text: 2 of 4; Cohen's kappa on the artifact marks 0.00." in lines
    assert "- Marked by the first reading only: 1 (s1); by the second only: 1 (s2)." in lines
    assert "- Over-cuts by the second reading: 1 (s3)." in lines
    no_over = {k: {"artifact": v["artifact"]} for k, v in second.items()}  # a review without the field: no line
    assert not any("Over-cuts" in x for x in mod.agreement_lines(texts, first, no_over, "r2.jsonl"))


def test_residual_report_refuses_a_bad_second_reading_before_writing(tmp_path):
    """A second reading that misses, repeats or adds a text is refused in one line, and nothing is written."""
    mod = _residual_module()
    from zcp_core.artifacts.residual import residual_path

    lib = load_library()
    stored = residual_path(lib)
    before = stored.read_bytes() if stored.exists() else None
    sample, review, second = tmp_path / "s.jsonl", tmp_path / "r.jsonl", tmp_path / "r2.jsonl"
    sample.write_text('{"sample_id": "s001", "id": "a"}\n{"sample_id": "s002", "id": "b"}\n')
    review.write_text('{"sample_id": "s001", "artifact": false}\n{"sample_id": "s002", "artifact": true}\n')
    for body, why in [('{"sample_id": "s001", "artifact": false}\n', "1 sampled texts not reviewed"),
                      ('{"sample_id": "s001", "artifact": false}\n{"sample_id": "s001", "artifact": true}\n'
                       '{"sample_id": "s002", "artifact": true}\n', "sample_id s001 is reviewed twice"),
                      ('{"sample_id": "s001", "artifact": false}\n{"sample_id": "s002", "artifact": true}\n'
                       '{"sample_id": "s009", "artifact": true}\n', "1 rows name no sampled text")]:
        second.write_text(body)
        with pytest.raises(SystemExit, match=why):
            mod.main(["--sample", str(sample), "--review", str(review), "--second-review", str(second),
                      "--result", str(tmp_path / "out.md")])
        assert not (tmp_path / "out.md").exists()
        assert (stored.read_bytes() if stored.exists() else None) == before  # the stored measurement untouched


def test_the_gated_threshold_is_the_highest_clean_shaped_score_plus_the_margin(monkeypatch):
    """edge_detector.gated on a hand-made set: two clean texts and one positive with a shaped candidate."""
    import numpy as np

    from zcp_core.artifacts.edges import candidates
    from zcp_core.artifacts.edges_train import Example, rows

    spec = importlib.util.spec_from_file_location("edge_detector", ROOT / "benchmarks" / "edge_detector.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    glued = "Bispectrality of multivariable Racah-Wilson polynomialsThe bispectrality of them is reviewed here."
    examples = [Example("h", glued, source="human"), Example("c", glued, source="review-clean"),
                Example("p", glued, head=(55,), source="review-artifact")]
    r = rows(examples, "head")
    at_55 = [c.at == 55 for e in examples for c in candidates(e.text, "head")]  # the shaped one, per text
    oof = np.where(at_55, [{0: 0.3, 1: 0.5, 2: 0.9}[ex] for ex in r.example], 0.1)
    assert mod.gated(examples, r, oof, [2], 0.99)[0] is None  # 2 texts: too few
    monkeypatch.setattr(mod, "MIN_GATE_TEXTS", 2)
    at, fig = mod.gated(examples, r, oof, [2], 0.99)
    assert at == pytest.approx(0.5 + mod.MARGIN)
    assert fig["clean_texts_with_a_gated_candidate"] == {"human": 1, "review-clean": 1}
    assert (fig["positive_texts_cut_only_by_the_gate_oof"], fig["positive_texts_cut_elsewhere_by_the_gate_oof"]) == (1, 0)
    assert mod.gated(examples, r, oof, [2], 0.8)[1][
        "positive_texts_cut_only_by_the_gate_oof"] == 0  # the ordinary cut already takes it


def test_edge_training_reads_each_round_once_and_skips_on_request(tmp_path):
    """A second, blind reading is never training data; --skip-review leaves a review out; a misspelt skip is refused."""
    spec = importlib.util.spec_from_file_location("edge_detector", ROOT / "benchmarks" / "edge_detector.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("round1", "round2"):
        (tmp_path / f"clean_residual_{name}_sample.jsonl").write_text(
            '{"header": true}\n{"sample_id": "s001", "id": "%s"}\n' % name)
        (tmp_path / f"clean_residual_{name}_review.jsonl").write_text('{"sample_id": "s001", "artifact": true}\n')
    (tmp_path / "clean_residual_round2_second_review.jsonl").write_text('{"sample_id": "s001", "artifact": false}\n')
    pairs = mod.reviewed(tmp_path)
    assert [(s["id"], r["artifact"]) for s, r in pairs] == [("round1", True), ("round2", True)]
    assert all(r["criteria"] for _, r in pairs)  # made under the written criteria: its clean marks are negatives
    assert "clean_residual_round5_review.jsonl" in mod.BEFORE_CRITERIA
    assert "clean_residual_round6_review.jsonl" not in mod.BEFORE_CRITERIA
    skipped = mod.reviewed(tmp_path, (tmp_path / "clean_residual_round2_review.jsonl",))
    assert [s["id"] for s, _ in skipped] == ["round1"]
    with pytest.raises(SystemExit, match="--skip-review: .* is not a file"):
        mod.reviewed(tmp_path, (tmp_path / "clean_residual_round3_review.jsonl",))


def test_a_sample_file_is_not_replaced_without_overwrite(tmp_path, monkeypatch, capsys):
    """A drawn sample may already be under review: drawing again to its path is refused in one line."""
    spec = importlib.util.spec_from_file_location("clean_residual_sample", ROOT / "benchmarks" / "clean_residual_sample.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "s.jsonl"
    out.write_text("kept\n")
    monkeypatch.setattr("sys.argv", ["clean_residual_sample.py", "--out", str(out), "--data", str(tmp_path / "none")])
    with pytest.raises(SystemExit):
        mod.main()
    assert "pass --overwrite" in capsys.readouterr().err and out.read_text() == "kept\n"


@pytest.mark.parametrize(("pool", "sample", "line"), [
    (532, "training half", "- Pool: 532 texts could be drawn (kept LLM texts outside every earlier sample and the "
                           "detector's training half); 212 are left for a later round, too few for another of 300."),
    (852, "texts the edge detector learned from", "- Pool: 852 texts could be drawn (kept LLM texts outside every "
          "earlier sample and the texts the detector learned from); 532 are left for a later round, enough for another "
          "of 300."),
])
def test_residual_report_says_what_the_pool_has_left(pool, sample, line):
    """A later round needs fresh texts: the report says how many a draw of this size leaves, and from what."""
    texts = [{"sample_id": f"s{i:03d}", "edits": []} for i in range(320)]
    assert line in _residual_module().extra_lines({"pool": pool, "sample": f"320 drawn, and the {sample} left out"},
                                                  texts, {})


def test_the_training_list_names_its_model_file_and_every_text_learned_from(tmp_path):
    """The list a residual sample leaves out: every non-human example's text, tied to the model file's sha256; a
    list for another model file, or none, is refused with the file and field named."""
    from zcp_core.artifacts.edges_train import Example

    spec = importlib.util.spec_from_file_location("edge_detector", ROOT / "benchmarks" / "edge_detector.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, other = tmp_path / "m.npz", tmp_path / "other.npz"
    model.write_bytes(b"one model")
    other.write_bytes(b"another model")
    examples = [Example("h1", "Human text.", source="human"), Example("a", "Title Body.", head=(5,), source="headline"),
                Example("a", "Title  Body.", head=(5,), source="headline-glued"),
                Example("r", "Reviewed text.", source="review-clean")]
    listing = tmp_path / "training.jsonl"
    mod.write_training(listing, examples, model)
    assert mod.training_ids(listing, model) == {"a", "r"}
    assert json.loads(listing.read_text().splitlines()[0])["texts"] == 2
    with pytest.raises(SystemExit, match="model_sha256"):
        mod.training_ids(listing, other)
    with pytest.raises(SystemExit, match="absent"):
        mod.training_ids(tmp_path / "none.jsonl", model)


def test_holdback_best_case_golden():
    """A perfect hold-back of 1% of the kept texts at a 5% residual share leaves 4/99; room beyond the residual
    texts takes nothing more."""
    spec = importlib.util.spec_from_file_location("residual_holdback", ROOT / "benchmarks" / "residual_holdback.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.best_case(0.05, 0.01) == pytest.approx(0.04 / 0.99)
    assert mod.best_case(0.005, 0.01) == 0.0
    assert mod.best_case(0.05, 0.0) == 0.05
