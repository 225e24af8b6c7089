"""Generated learner essays for the feedback task's lite variant.

`make` returns one table shaped like the competition's train.csv (text_id, full_text,
cohesion, syntax, vocabulary, phraseology, grammar, conventions); the task's declared
split turns it into train.csv, test.csv and the private answers, as for the full variant.

Each generated writer has six correlated skills. A writer's scores are their skills
on the 1.0-5.0 scale (rounded to halves, with some rater noise), and the essay they write
shows the skills through measurable habits: linking words and paragraphing (cohesion),
joined or run-on sentences (syntax), plain or advanced words (vocabulary), natural or
awkward collocations (phraseology), agreement and tense slips (grammar), misspellings,
capitals and apostrophes (conventions). Better writers also tend to write more.
Sentences come from the bank at the end of this file.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pandas as pd

SCORES = ("cohesion", "syntax", "vocabulary", "phraseology", "grammar", "conventions")
N_ESSAYS = 1000

TRANSITIONS = ("First,", "Second,", "Also,", "In addition,", "Furthermore,", "However,",
               "For example,", "Moreover,", "As a result,", "For instance,", "On top of that,")
JOINERS = ((", because ", True), (", which means that ", True), (", so ", True), (", although ", True),
           (" and ", False), (", ", False))
OPENERS = ("However", "On the other hand", "In the other hand", "For example")   # take no transition
COMMON_MISSPELLINGS = {"because": "becuase", "their": "there", "believe": "beleive", "friends": "freinds",
                       "different": "diffrent", "people": "peopel", "which": "wich", "really": "realy",
                       "until": "untill", "school": "scholl", "students": "studens", "experience":
                       "experiance", "important": "importent", "necessary": "neccesary", "a lot": "alot"}
MARKUP = {"vocabulary": re.compile(r"\{([^{}|]*)\|([^{}|]*)\}"),
          "phraseology": re.compile(r"<([^<>|]*)\|([^<>|]*)>"),
          "grammar": re.compile(r"\[([^\[\]|]*)\|([^\[\]|]*)\]")}


def read_bank(text: str) -> dict:
    """{topic: {"claim": str, "thesis": [...], "body": [...], "off": [...]}} from the bank's text."""
    topics: dict = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("topic "):
            name, _, claim = line[len("topic "):].partition("|")
            current = topics.setdefault(name.strip(), {"claim": claim.strip(), "thesis": [], "body": [],
                                                       "off": []})
        else:
            kind, _, sentence = line.partition(":")
            current[kind.strip()].append(sentence.strip())
    return topics


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Writer:
    """One generated student: skills, the habits they imply, and the essay they write."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        general = rng.normal()
        self.skill = dict(zip(SCORES, 0.8 * general + 0.6 * rng.normal(size=len(SCORES))))
        habit = {name: value + rng.normal(scale=0.35) for name, value in self.skill.items()}
        self.p_transition = _sigmoid(1.6 * habit["cohesion"] - 0.3)
        self.p_off_topic = 0.25 * _sigmoid(-2.0 * habit["cohesion"] - 1.0)
        self.organised = habit["cohesion"] > -0.6
        self.p_join = _sigmoid(1.5 * habit["syntax"] - 0.6)
        self.p_run_on = _sigmoid(-1.8 * habit["syntax"] - 0.4)
        self.p_advanced = _sigmoid(1.8 * habit["vocabulary"])
        self.p_awkward = _sigmoid(-2.0 * habit["phraseology"] - 1.3)
        self.p_slip = _sigmoid(-2.0 * habit["grammar"] - 1.3)
        conventions = habit["conventions"]
        self.p_misspell = 0.12 * _sigmoid(-2.0 * conventions - 0.8)
        self.p_lower_i = _sigmoid(-2.5 * conventions - 1.5)
        self.p_no_capital = 0.5 * _sigmoid(-2.0 * conventions - 1.2)
        self.p_no_apostrophe = _sigmoid(-2.0 * conventions - 0.5)
        self.n_sentences = int(np.clip(round(13 + 4.0 * general + rng.normal(scale=3.0)), 5, 30))

    def scores(self) -> dict:
        """The six analytic scores, as raters would give them."""
        out = {}
        for name, value in self.skill.items():
            noisy = 3.1 + 0.6 * value + self.rng.normal(scale=0.25)
            out[name] = float(np.clip(np.round(noisy * 2) / 2, 1.0, 5.0))
        return out

    # -- sentence level ---------------------------------------------------
    def _resolve(self, sentence: str) -> str:
        rng = self.rng
        sentence = MARKUP["vocabulary"].sub(
            lambda m: m.group(2) if rng.random() < self.p_advanced else m.group(1), sentence)
        sentence = MARKUP["phraseology"].sub(
            lambda m: m.group(2) if rng.random() < self.p_awkward else m.group(1), sentence)
        return MARKUP["grammar"].sub(lambda m: m.group(2) if rng.random() < self.p_slip else m.group(1),
                                     sentence)

    def _misspell(self, word: str) -> str:
        rng = self.rng
        lower = word.lower()
        if lower in COMMON_MISSPELLINGS and rng.random() < 0.7:
            return COMMON_MISSPELLINGS[lower]
        letters = [i for i, c in enumerate(word) if c.isalpha()]
        if len(letters) < 4:
            return word
        i = letters[rng.integers(1, len(letters) - 1)]
        kind = rng.integers(3)
        if kind == 0:
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        if kind == 1:
            return word[:i] + word[i + 1:]
        return word[:i] + word[i] + word[i:]

    def _conventions(self, sentence: str) -> str:
        rng = self.rng
        if rng.random() < self.p_misspell * 4:      # a chance per sentence for the two-word case
            sentence = sentence.replace("a lot", "alot")
        words = [self._misspell(w) if rng.random() < self.p_misspell else w for w in sentence.split(" ")]
        sentence = " ".join(words)
        if rng.random() < self.p_lower_i:
            sentence = re.sub(r"\bI\b", "i", sentence)
        if rng.random() < self.p_no_apostrophe:
            sentence = sentence.replace("n't", "nt").replace("'s", "s")
        if rng.random() < self.p_no_capital:
            sentence = sentence[:1].lower() + sentence[1:]
        return sentence

    def _link(self, sentences: list[str]) -> list[str]:
        """Join some neighbouring sentences into longer ones, well or badly."""
        rng = self.rng
        out: list[str] = []
        i = 0
        while i < len(sentences):
            current = sentences[i]
            if i + 1 < len(sentences):
                following = sentences[i + 1]
                tail = following[0].lower() + following[1:] if not following.startswith("I ") else following
                if rng.random() < self.p_join * 0.5:
                    joiner = [j for j, good in JOINERS if good][rng.integers(4)]
                    out.append(current.rstrip(".") + joiner + tail)
                    i += 2
                    continue
                if rng.random() < self.p_run_on * 0.5:
                    joiner = [j for j, good in JOINERS if not good][rng.integers(2)]
                    out.append(current.rstrip(".") + joiner + tail)
                    i += 2
                    continue
            out.append(current)
            i += 1
        return out

    # -- essay level ------------------------------------------------------
    def write(self, topic: dict, general: dict) -> str:
        rng = self.rng
        pool = topic["body"] + general["body"]
        n_body = min(self.n_sentences - 2, len(pool))
        body = [pool[j] for j in rng.choice(len(pool), size=n_body, replace=False)]
        for _ in range(rng.binomial(n_body, self.p_off_topic)):
            body.insert(rng.integers(len(body) + 1), general["off"][rng.integers(len(general["off"]))])
        thesis = topic["thesis"][rng.integers(len(topic["thesis"]))]
        closing = f"That is why I {{believe|am convinced}} that {topic['claim']}."

        body = [self._resolve(s) for s in body]
        body = self._link(body)
        linked = []
        for sentence in body:
            if rng.random() < self.p_transition and not sentence.startswith(OPENERS):
                transition = TRANSITIONS[rng.integers(len(TRANSITIONS))]
                start = sentence if sentence.startswith("I ") else sentence[0].lower() + sentence[1:]
                sentence = f"{transition} {start}"
            linked.append(sentence)
        intro = [self._resolve(thesis)]
        ending = [self._resolve(closing)]
        if rng.random() < self.p_transition:
            ending[0] = "In conclusion, t" + ending[0][1:]

        sentences = [self._conventions(s) for s in intro + linked + ending]
        n_intro, n_ending = len(intro), len(ending)
        if not self.organised:
            # one block of text, or line breaks in arbitrary places
            if rng.random() < 0.5:
                return " ".join(sentences)
            cuts = sorted(rng.choice(np.arange(1, len(sentences)), size=min(2, len(sentences) - 1),
                                     replace=False))
            return "\n\n".join(" ".join(sentences[a:b]) for a, b in zip([0, *cuts], [*cuts, len(sentences)]))
        middle = sentences[n_intro:len(sentences) - n_ending]
        n_paragraphs = max(1, min(3, len(middle) // 3))
        bounds = np.linspace(0, len(middle), n_paragraphs + 1).round().astype(int)
        paragraphs = [" ".join(sentences[:n_intro])]
        paragraphs += [" ".join(middle[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        paragraphs.append(" ".join(sentences[len(sentences) - n_ending:]))
        return "\n\n".join(paragraphs)


def generate_essays(seed: int, count: int = N_ESSAYS) -> pd.DataFrame:
    """text_id, full_text and the six scores of `count` generated essays."""
    rng = np.random.default_rng(seed)
    bank = read_bank(ESSAY_BANK)
    general = bank.pop("general")
    topics = list(bank.values())
    rows = []
    for _ in range(count):
        writer = Writer(rng)
        text = writer.write(topics[rng.integers(len(topics))], general)
        text_id = "".join(rng.choice(list("0123456789ABCDEF"), size=12))
        rows.append({"text_id": text_id, "full_text": text, **writer.scores()})
    return pd.DataFrame(rows)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> pd.DataFrame:
    """Lite variant: one table of generated essays; the task's split makes train, test and answers.
    `sample` (mlabc check asks for one): that many essays, written the same way."""
    return generate_essays(seed, N_ESSAYS if sample is None else min(N_ESSAYS, sample))


# The sentence bank, kept in this file so that the data cache (keyed by this file) sees any change.
ESSAY_BANK = """
# `topic NAME | CLAIM` starts a topic; CLAIM ends the conclusion ("That is why I believe CLAIM.").
# `thesis:` opens the essay, `body:` sentences argue, `topic general` holds sentences for any topic.
# Markup, resolved per essay from the writer's skills:
#   {plain|advanced}    word choice (vocabulary)
#   <natural|awkward>   collocation (phraseology)
#   [correct|slip]      grammar

topic phones | students should be allowed to use their phones at school
thesis: In my opinion, students {should|ought to} be allowed to use their phones at school.
thesis: Many schools [do|does] not let students use phones, but I think this rule {is wrong|is misguided}.
body: Phones [help|helps] students {find|locate} information {fast|rapidly} when they [are|is] doing homework.
body: Parents often [want|wants] to <call their children|call to their children> when something {bad|serious} happens.
body: If a student [forgets|forget] to write down the homework, they can <take a photo|make a photo> of the board.
body: Some teachers [say|says] that phones [are|is] a {big|major} distraction in class.
body: A student who [is|are] texting during class <is not paying attention|is not putting attention> to the lesson.
body: Schools {can|could} {make|establish} rules so that phones [are|is] only used at lunch.
body: There [are|is] {a lot of|numerous} apps that [help|helps] with math and reading.
body: When I [was|were] in middle school, my phone <helped me study|helped me for study> for every test.
body: It [is|are] {important|essential} for young people to learn how to use technology {well|responsibly}.
body: Banning phones completely [would|will] not <solve the problem|solve at the problem> of distraction.
body: Students [need|needs] to learn self control instead of {just|merely} following rules.
body: A phone can <save a life|safe a life> in an emergency, for example when someone [gets|get] hurt.
body: Some students [use|uses] their phones to check the bus schedule or <keep track of|keep the track of> their grades.

topic online | students would benefit from taking classes from home
thesis: I {think|believe} that students would {benefit|profit} from taking classes from home.
thesis: Online classes [have|has] {become|grown} very common, and I think they [are|is] a good option.
body: Students who [take|takes] classes at home can work at their own {speed|pace}.
body: Some students [feel|feels] {nervous|anxious} in a classroom full of people.
body: At home nobody [interrupts|interrupt] you, so it [is|are] easier to <focus on|focus in> the work.
body: Online classes [save|saves] time because students do not have to <take the bus|take on the bus> every morning.
body: A student who [has|have] a job can <make time for|do time for> school in the evening.
body: However, some students [do|does] not have a good computer or internet at home.
body: Without a teacher in the room, some students [stop|stops] doing their work and <fall behind|fall back>.
body: Students also [miss|misses] the chance to talk with their friends and {make|build} relationships.
body: Teachers can <answer questions|answer to questions> by video or email, so help [is|are] still there.
body: Distance learning [teaches|teach] students to be {independent|self-reliant} and to plan their time.
body: My cousin [took|taked] online classes last year and her grades {got better|improved considerably}.
body: Parents can <keep an eye on|keep an eye at> what their children [are|is] learning every day.

topic summer | summer projects should be designed by the students
thesis: I {think|am convinced} that summer projects should be designed by the students, not by the teachers.
thesis: Every summer students [have|has] to do a project, and the question is who should {make|design} it.
body: When students [choose|chooses] their own project, they [are|is] more {interested|motivated}.
body: A student who [loves|love] music could <make a project|do a project> about the history of jazz.
body: Teachers [know|knows] what students need to learn before the next school year.
body: If the teacher [designs|design] the project, every student [works|work] on the same skills.
body: Some students [do|does] not know how to plan a {big|substantial} project on their own.
body: Students <learn from their mistakes|learn of their mistakes> when they design something themselves.
body: A project about something you [like|likes] does not feel like homework at all.
body: Over the summer many students [forget|forgets] {a lot of|a considerable amount of} what they learned.
body: A teacher-designed project can <make sure|make certain that> students [practice|practices] math and reading.
body: Students [have|has] different {interests|passions}, so one project cannot fit everyone.
body: Last summer I [built|builded] a small garden and wrote about how plants grow.
body: Designing a project [teaches|teach] students how to <set goals|put goals> and manage their time.

topic activities | every student should take part in at least one extracurricular activity
thesis: I {agree|strongly agree} that every student should take part in at least one extracurricular activity.
thesis: Some principals [want|wants] every student to do an activity after school, and I think that [is|are] a good idea.
body: Activities like sports or clubs [help|helps] students <make friends|do friends> outside of class.
body: A student who [plays|play] on a team [learns|learn] how to work with other people.
body: Some students [have|has] jobs or [have|has] to take care of their brothers and sisters.
body: Forcing students to join a club [is|are] not {fair|reasonable} for everyone.
body: Colleges {like|value} students who [have|has] done activities besides their classes.
body: The art club [gives|give] quiet students a place to <express themselves|express theirselves>.
body: After a long day of school, some students [are|is] too {tired|exhausted} for more activities.
body: My brother [joined|joint] the robotics club and now he wants to be an engineer.
body: Students who [stay|stays] busy after school [get|gets] into less trouble.
body: An activity can <take a lot of time|take a lot of the time> away from homework.
body: Schools should offer {many|a wide variety of} activities so that everyone can find one they [like|likes].
body: Being in a club [helps|help] students feel that they <belong to|belong at> the school.

topic advice | asking several people for advice leads to better choices
thesis: When people [have|has] a problem, asking more than one person for advice {helps|enables} them to choose better.
thesis: I {think|believe} that asking several people for advice [is|are] better than asking only one.
body: Different people [have|has] different {experiences|perspectives}, so they see the problem in different ways.
body: If you only [ask|asks] one person, you might get advice that [is|are] {wrong|misleading}.
body: My mother and my teacher [gave|give] me very different advice about which classes to take.
body: Hearing many opinions [helps|help] you <make a decision|do a decision> you will not regret.
body: Some people [get|gets] {confused|overwhelmed} when everyone tells them something different.
body: A friend who [knows|know] you well can <give you advice|give you an advice> that fits your life.
body: Older people [have|has] already made many of the mistakes that young people [make|makes].
body: In the end, the person with the problem [has|have] to decide alone.
body: When I [was|were] choosing a sport, I asked my coach, my father and my best friend.
body: Asking for advice [shows|show] that you <take the problem seriously|take serious the problem>.
body: Experts can {explain|clarify} things that friends and family [do|does] not know.
body: Comparing advice from several people [is|are] like <looking at something from every side|looking something from every side>.

topic general | this matters
body: This [is|are] {very|extremely} {important|significant} for students and their families.
body: <On the other hand|In the other hand>, some people [disagree|disagrees] with this idea.
body: I [have|has] seen this happen many times in my own {life|experience}.
body: Everybody [knows|know] that school [is|are] {hard|demanding} for many teenagers.
body: Some people [think|thinks] the opposite, but their reasons [are|is] not {good|convincing}.
body: There [are|is] {many|numerous} {reasons|arguments} for this, and I will <explain them|explain them to you them> here.
body: It [depends|depend] on the student and on what they [want|wants] to do in the future.
body: This <makes a big difference|does a big difference> in the life of a student.
body: Nobody [wants|want] to waste their time on something that [does|do] not help them.
body: We should <listen to|listen> what students [have|has] to say about their own education.
off: My favorite food [is|are] pizza and I eat it every friday with my family.
off: Yesterday it [was|were] raining all day so we stayed inside and watched a movie.
off: My dog [is|are] named Max and he [likes|like] to run in the park.
off: I want to visit Japan one day because the pictures [look|looks] beautiful.
"""
