//! Light stemming of one word for the fingerprint: stop words and framing words are skipped,
//! one Russian or English inflection ending is cut, Cyrillic is transliterated and the first
//! few letters are kept, so that `монтажёра`/`монтаж` and `бот`/`bot` meet.

use std::collections::HashSet;
use std::sync::LazyLock;

pub(super) fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{0400}'..='\u{052F}')
}

/// Function words and the framing every job post uses; they say nothing about which job.
const STOP_WORDS: &str = "
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
мне было вот от меня еще нет о из ему когда даже ну ли если уже или ни быть был него до вас
там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтобы
без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой здесь этом
один мой тем нее сейчас были куда можно при об хоть после над больше тот через эти нас про
всего них какая много эту моя свою этой перед лучше чуть том такой им более всегда между
наш наша наше наши ваш ваша ваше ваши весь вся всё это эта также либо очень еще ещё сюда
ищу ищем ищется нужен нужна нужно нужны нужен требуется требуются бюджет оплата оплачу
пишите писать пиши напишите пишем лс лички личку личные актуально актуальна актуален срочно
вакансия вакансии заказ задача задачи репост ссылка ссылке контакт контакты связь отклик
отклики откликаться кидайте присылайте присылать прошу подробности детали ответ
the a an and or of to in on for with by at from as is are be we you our your us it its this
that these those will can i me my who what which per via into up out not no if any all also
some more than then so do does have has had need needed needs looking wanted hiring hire
hires seeking must please dm pm send apply write contact contacts budget pay paid rate
still urgent repost details asap am pm just get got let one two etc our ours their them
";

static STOP_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.split_whitespace().collect());

/// Russian inflection endings, longest first.
const RU_ENDINGS: [&str; 47] = [
    "ться", "ами", "ями", "ого", "его", "ому", "ему", "ыми", "ими", "ать", "ять", "ить", "ешь",
    "ала", "ила", "али", "или", "ой", "ей", "ом", "ем", "ам", "ям", "ах", "ях", "ов", "ев", "ая",
    "яя", "ое", "ее", "ые", "ие", "ый", "ий", "ую", "юю", "ою", "ею", "ым", "им", "ых", "их", "ть",
    "ет", "ит", "ут",
];
const RU_SHORT_ENDINGS: [char; 10] = ['а', 'я', 'о', 'е', 'ы', 'и', 'у', 'ю', 'ь', 'й'];
const EN_ENDINGS: [&str; 7] = ["ings", "ing", "ers", "er", "ed", "es", "s"];
/// Letters a stem keeps.
const STEM_LEN: usize = 5;

/// The stem of a word, or `None` for a stop word or a one-letter word.
pub(super) fn stem(word: &str) -> Option<String> {
    let len = word.chars().count();
    if len < 2 || STOP_SET.contains(word) {
        return None;
    }
    if word.chars().any(|c| c.is_ascii_digit()) {
        return Some(word.chars().take(8).collect());
    }
    let cyrillic = word.chars().filter(|&c| is_cyrillic(c)).count();
    let base: &str = if cyrillic * 2 > len {
        let long = RU_ENDINGS
            .iter()
            .find(|e| word.ends_with(*e) && len - e.chars().count() >= 3);
        match long {
            Some(e) => &word[..word.len() - e.len()],
            None => match word.chars().next_back() {
                Some(last) if RU_SHORT_ENDINGS.contains(&last) && len > 3 => {
                    &word[..word.len() - last.len_utf8()]
                }
                _ => word,
            },
        }
    } else {
        EN_ENDINGS
            .iter()
            .find(|e| word.ends_with(*e) && len - e.len() >= 3)
            .map_or(word, |e| &word[..word.len() - e.len()])
    };
    let mut out = String::with_capacity(STEM_LEN + 2);
    for c in base.chars() {
        match transliterate(c) {
            Some(latin) => out.push_str(latin),
            None => out.push(c),
        }
        if out.chars().count() >= STEM_LEN {
            break;
        }
    }
    Some(out.chars().take(STEM_LEN).collect())
}

/// Latin spelling of a Cyrillic letter (`None` for anything else).
fn transliterate(c: char) -> Option<&'static str> {
    Some(match c {
        'а' => "a",
        'б' => "b",
        'в' => "v",
        'г' | 'ґ' => "g",
        'д' => "d",
        'е' | 'э' | 'є' => "e",
        'ж' => "zh",
        'з' => "z",
        'и' | 'й' | 'і' | 'ї' => "i",
        'к' => "k",
        'л' => "l",
        'м' => "m",
        'н' => "n",
        'о' => "o",
        'п' => "p",
        'р' => "r",
        'с' => "s",
        'т' => "t",
        'у' => "u",
        'ф' => "f",
        'х' => "h",
        'ц' => "c",
        'ч' => "ch",
        'ш' => "sh",
        'щ' => "sch",
        'ъ' | 'ь' => "",
        'ы' => "y",
        'ю' => "yu",
        'я' => "ya",
        _ => return None,
    })
}
