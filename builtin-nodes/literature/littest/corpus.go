package littest

// Articles returns the default corpus's articles: fixture records (invented
// titles and identifiers in the real formats) on metformin and cognitive
// decline, two reporting a benefit, one reporting none, and one preprint
// that only Europe PMC indexes.
func Articles() []Article {
	return []Article{{
		PMID: "39000101", PMCID: "PMC11000101", DOI: "10.1000/fixture.101",
		Title:    "Metformin use and incidence of dementia in older adults with type 2 diabetes: a cohort study",
		Abstract: "<h4>Background</h4>Metformin has been linked to lower dementia risk. <h4>Results</h4>Among 41,000 adults, metformin use was associated with a lower incidence of dementia (HR 0.79).",
		Journal:  "J Fixture Neurol", PubDate: "2021 Mar 15", Authors: []string{"Rivera A", "Okafor B", "Lindqvist C"},
	}, {
		PMID: "39000102", DOI: "10.1000/fixture.102",
		Title:    "Metformin and cognitive decline: a randomized trial in adults with mild cognitive impairment",
		Abstract: "Over 18 months, metformin did not slow cognitive decline compared with placebo in adults with mild cognitive impairment.",
		Journal:  "Fixture Clin Trials", PubDate: "2023 Jan", Authors: []string{"Chen D", "Haddad E"},
	}, {
		PMID: "39000103", PMCID: "PMC11000103", DOI: "10.1000/fixture.103",
		Title:    "AMPK activation by metformin reduces tau phosphorylation in a mouse model of cognitive decline",
		Abstract: "In a mouse model, metformin activated AMPK and reduced tau phosphorylation, a mechanism that may protect against cognitive decline.",
		Journal:  "Fixture Mol Neurosci", PubDate: "2022 Aug 2", Authors: []string{"Novak F"},
	}, {
		PMCID: "PMC11000104", DOI: "10.1000/fixture.104", EuropePMCOnly: true,
		Title:    "Confounding by indication in observational studies of metformin and dementia",
		Abstract: "Healthier patients are more often prescribed metformin; adjusting for kidney function removes most of the apparent association with dementia and cognitive decline.",
		Journal:  "Fixture Epidemiol Preprints", PubDate: "2024", Authors: []string{"Adeyemi G", "Sato H"},
	}}
}

// Trials returns the default corpus's trials.
func Trials() []Trial {
	return []Trial{{
		NCTID: "NCT09000201", BriefTitle: "Metformin in Amnestic Mild Cognitive Impairment",
		BriefSummary: "A phase 2 trial of metformin to slow cognitive decline in adults with amnestic mild cognitive impairment.",
		StartDate:    "2021-06", Status: "RECRUITING", Conditions: []string{"Mild Cognitive Impairment", "Cognitive Decline"},
	}, {
		NCTID: "NCT09000202", BriefTitle: "Metformin for Prevention of Dementia in Prediabetes",
		BriefSummary: "Does metformin lower the risk of dementia and cognitive decline in adults with prediabetes?",
		StartDate:    "2019-11-04", Status: "COMPLETED", Conditions: []string{"Prediabetes", "Dementia"},
	}}
}
